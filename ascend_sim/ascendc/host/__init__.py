"""The host side of an Ascend C program on the simulator: the ACL runtime subset (``acl``), the examples'
``ReadFile``/``WriteFile`` (``data_utils``), ``std::vector`` (``std_vector``) and ``ascend-sim run``
(``run``)."""
