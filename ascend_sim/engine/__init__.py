"""The engine: the current core, the issue path, shadow memory, timing and the block scheduler.

Nothing here knows Ascend C names; api/ turns kernel calls into engine instructions.
"""
