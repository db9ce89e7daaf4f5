"""The host side of an Ascend C program on the simulator: the ACL runtime subset (``acl``), the examples'
``ReadFile``/``WriteFile`` (``data_utils``) and ``ascend-sim run`` (``run``)."""
