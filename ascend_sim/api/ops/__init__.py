"""The instructions a kernel issues: data movement, vector, cube and scalar."""
