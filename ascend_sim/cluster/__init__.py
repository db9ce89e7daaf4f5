"""Module 3 (distributed): a simulated cluster — topology, HCCL-style collectives, multi-chip launches.

Empty until Module 3 is built; it composes engine/ and api/ and adds files here, not fields on the core.
"""
