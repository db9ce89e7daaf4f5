"""Ascend C in C++ (issue 27). Provisional package marker of branch h-host: the front end's
``ascend_sim/ascendc/__init__.py`` (branch h-front, ``load``, ``CompileError``) replaces this file on merge."""
