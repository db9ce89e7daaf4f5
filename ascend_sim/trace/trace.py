"""The instruction records of one launch, in issue order."""
from __future__ import annotations

from dataclasses import replace

from ascend_sim.engine.errors import resolve_site
from ascend_sim.engine.instr import Instr
from ascend_sim.trace.table import TraceTable, table_from_rows


_NO_FIELDS = (0,) * 15


class Trace:
    """The instruction records of one launch, in issue order."""

    def __init__(self, records: list[tuple], chip, n_cores: int):
        self._raw = records         # the launch's records (engine/records.RecordList: Instr's fields, packed)
        self._records: list[Instr] | None = None
        self._table: TraceTable | None = None
        self.chip, self.n_cores = chip, n_cores

    @property
    def records(self) -> list[Instr]:
        """The ``Instr`` records, made from the launch's tuples on first use."""
        if self._records is None:       # kernel_point sites become (file, line) here
            self._records = [Instr(*t[:13], resolve_site(t[13]), *t[14:]) for t in self._raw]
            self._raw = None
        return self._records

    def table(self) -> TraceTable:
        """The records as one :class:`TraceTable` (trace/table.py), built on first use: what analyses read."""
        if self._table is None:
            if self._records is None:
                self._table = table_from_rows(self._raw, resolve_site)
            else:
                self._table = table_from_rows([(r.index, r.core, r.core_type, r.pipe, r.op, r.ready, r.start, r.end,
                                                r.wait_on, r.nbytes, r.src, r.dst, r.flops, r.site, r.klass)
                                               for r in self._records], resolve_site)
            self._table = replace(self._table, region_source=self._regions)
        return self._table

    def _regions(self) -> list[tuple[tuple, tuple]]:
        if self._records is None and hasattr(self._raw, "columns"):    # without making every Instr
            cols = self._raw.columns()
            return [(Instr(*_NO_FIELDS, rd).reads, Instr(*_NO_FIELDS, (), wr).writes)
                    for rd, wr in zip(cols[15], cols[16])]
        return [(r.reads, r.writes) for r in self.records]

    def __len__(self) -> int:
        return len(self._raw) if self._records is None else len(self._records)

    def __iter__(self):
        return iter(self.records)

    def for_core(self, core: int, core_type: str | None = None) -> list[Instr]:
        return [r for r in self.records if r.core == core and (core_type is None or r.core_type == core_type)]

    def signature(self) -> tuple:
        """A hashable summary used to show two runs gave the identical trace."""
        return tuple((r.core, r.core_type, r.pipe, r.op, r.start, r.end, r.nbytes, r.site[1]) for r in self.records)
