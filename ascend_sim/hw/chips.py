"""Chip profiles: every hardware number of the simulator lives here.

Each number carries its source and a tag: [OFF] official Huawei/CANN,
[DER] arithmetic on official values, [EST] third-party or our own estimate,
[CAL] an estimate calibrated against a published measurement (see
benchmarks/RESULTS.md). Sources are abbreviated: DK = CANN's public Ascend C devkit repository
``asc-devkit`` (https://github.com/cannmirror/asc-devkit, a mirror of CANN's repository), G = its
programming guide ``docs/zh/guide/``, HW = G ``编程指南/高级编程/硬件实现/`` (the hardware chapters),
A = its API pages ``docs/zh/api/``, SMP = https://github.com/Ascend/samples.

Calibration: the [CAL] costs of the default Ascend910B profile were fitted so that Huawei's
published Ascend C Add case study (Atlas A2 / 910B, z = x + y over 8192 x 8192 half; G
``算子实践参考/典型算子实践案例/SIMD算子实现/Add矢量算子实践/``) comes out right: one vector core measured 6,909.6 us with MTE2 busy 87.3 %, simulated
6,854.9 us (-0.8 %); 48 vector cores with 8 KB copies measured 306.58 us with MTE2 busy 72.5 %,
simulated 335.4 us (+9.4 %), MTE2-bound in both. Reproduce with
``python benchmarks/add_case_study.py``; the table is in benchmarks/RESULTS.md.

Timing model II (issue 14) added the L2 cache, UB bank conflicts, GM packages and the cube path's
rates from Huawei's own GEMM cycle model (CANN ``cache_tiling_cycle_model.cc``), and HBM at its
official 1.6 TB/s shared fairly by the cores copying; none of them fitted. Today Add cases 1 and 2 land at
+3.3 % and -4.2 % (+5.1 % before blocks ran in time order), the UB bank-conflict sample within 13 %
on all eight layouts (``benchmarks/bank_conflicts.py``), CATLASS's M1024 N576 K6144 matmul on 20
AIC at -6.6 % (24 tiles on 20 blocks) and -7.1 % (20 tiles) (``benchmarks/catlass_matmul.py``);
RESULTS.md section 1 (the first calibration's figures above: benchmarks/CHANGELOG.md).

Derive a custom chip with ``dataclasses.replace(Ascend910B(), ub_bytes=...)``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

KB = 1024
MB = 1024 * KB
GB = 1024 * MB

#: The DataBlock (数据块): the 32-byte unit of local memory that DataCopy burst lengths and strides, InitBuffer
#: sizes and the vector unit's block strides count in (one repeat is 8 of them). The same on every chip.
#: [OFF, DK kernel_utils_constants.h ONE_BLK_SIZE = 32; ascend_facts.md section 2 "Alignment"]
DATA_BLOCK_BYTES = 32

#: The instruction queues of Atlas A2/A3 (arch 2201) whose depth is published: the scalar stalls, and issues nothing
#: to any pipe, while one is full. [OFF, HW 硬件约束/NPU架构版本2201.md: "MTE1和MMAD指令队列的深度为32",
#: "对应指令队列容易满，会阻塞其他指令下发"]; the V, MTE2, MTE3 and FIX depths are not published.
#: Ascend910B()'s ChipProfile.pipe_queue_depth (see there).
ATLAS_A2_QUEUE_DEPTH = {"MTE1": 32, "M": 32}


@dataclass(frozen=True)
class ChipProfile:
    """A simulated Ascend chip: structure, capacities and the cycle-model costs."""

    name: str
    npu_arch: int                   # __NPU_ARCH__ code
    separated: bool                 # True: AIC and AIV are separate cores (A2/A3)
    aic_count: int                  # cube cores (coupled chips: AI Cores)
    aiv_count: int                  # vector cores (coupled chips: equal to aic_count)
    clock_ghz: float
    # --- on-chip capacities per core (bytes) ---
    ub_bytes: int
    ub_usable_bytes: int            # what TPipe.InitBuffer may hand out
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int
    l2_bytes: int
    gm_bytes: int
    # --- alignment rules (bytes) [OFF, HW NPU架构版本2201.md] ---
    ub_align: int = 32
    l1_align: int = 32
    l0ab_align: int = 512
    l0c_align: int = 64
    bt_bytes: int = 1024            # [OFF] DK L1ToBiasTable DataCopy page: "BiasTable Buffer总大小为1KB" (A2/A3)
    bt_align: int = 64              # [OFF] same page: BT destination "目的地址需要64字节对齐"
    gm_burst_align: int = 512       # GM addresses below this alignment lose bandwidth
    # --- vector unit [OFF, DK 高维切分.md: 256 B repeat, <=255 repeats] ---
    vec_repeat_bytes: int = 256
    vec_max_repeat: int = 255
    # --- SetFlag/WaitFlag event ids per HardEvent [OFF, DK SetFlag-WaitFlag(ISASI).md: "Atlas A2 ... 数据范围为：0-7",
    # Atlas 训练系列 0-3; ids 0-5 recommended, 6 reserved, 7 used by TPipe's automatic sync] ---
    event_ids: int = 8
    # --- the system counter GetSystemCycle reads [OFF, DK GetSystemCycle(ISASI).md: Atlas A2/A3 "按照50MHz的频率",
    # time = cycles / 50 us; not supported on Atlas 200I/500 A2 (310B) nor Atlas training products]; None: absent ---
    system_counter_hz: float | None = None
    # --- cycle model (all [EST] unless marked; [CAL] = fitted to the Add case) ---
    scalar_issue_cycles: int = 2            # [EST] scalar cost to issue one instruction
    pipe_queue_depth: dict = field(default_factory=dict)  # per pipe name, how many issued instructions its
                                            # queue holds before the scalar stalls (engine/core.instruction_queues);
                                            # a pipe not listed: unbounded. Atlas A2's depths are
                                            # ATLAS_A2_QUEUE_DEPTH [OFF] (the guide's NPU架构版本2201 hardware-
                                            # constraints page), on in Ascend910B() since 2026-12-07: with the queue
                                            # calls' Set/Wait taking entries (sync_queue_entries) and CATLASS's
                                            # replica issuing its copies as MmadAtlasA2Preload does, the validation
                                            # table gains the MTE2 Preload "before" point and step (-17.3 -> -6.5 %,
                                            # step +0.0 -> +11.5 % vs +7.7) and moves no other point (33 of 49, 14 of
                                            # 22; RESULTS 1c). Before: the instructions alone never filled a
                                            # Matmul-API queue (one LoadData3D per operand and base block) and
                                            # CATLASS's copies queued behind its LoadData 2D per 16 rows
    sync_queue_entries: bool = True         # [OFF rule] with pipe_queue_depth: the Set/Wait a TQue call emits
                                            # (EnQue, FreeTensor: Set; DeQue, AllocTensor: Wait) takes an entry in
                                            # its pipe's queue like any instruction (G 编程模型/AI-Core-SIMD编程/
                                            # 基于TPipe-TQue框架编程/TPipe-TQue框架编程原理.md: the scalar 发射s each
                                            # instruction into its unit's 指令队列; EnQue 发射 a Set, DeQue a Wait);
                                            # engine/core.Core.sync_entry. No effect while pipe_queue_depth is off
    scalar_mem_cycles: int = 10             # [EST] GetValue/SetValue on local memory
    scalar_gm_cycles: int = 200             # [EST] GetValue/SetValue on GM (uncached)
    flag_cycles: int = 1                    # [EST] SetFlag/WaitFlag instruction
    event_latency_cycles: int = 25          # [CAL] from a SetFlag (EnQue, FreeTensor) to the waiting pipe starting
    sync_all_cycles: int = 500              # [EST] SyncAll across cores
    cross_core_flag_cycles: int = 100       # [EST] CrossCoreSetFlag -> WaitFlag latency
    cross_core_flag_max_count: int = 15     # [OFF] the counter of one cross-core flagId counts 0..15; above it
                                            # the chip raises an exception (CrossCoreSetFlag(ISASI) and
                                            # CrossCoreWaitFlag(ISASI) pages, 约束说明, flagId相关的约束)
    gm_read_startup: int = 80               # [CAL] MTE2 GM->UB/L1 startup latency
    gm_read_bytes_per_cycle: float = 32.0   # [CAL] one core's MTE2 GM read rate
    gm_write_startup: int = 80              # [CAL] MTE3 UB->GM startup latency
    gm_write_bytes_per_cycle: float = 32.0  # [CAL] one core's MTE3 GM write rate
    aic_gm_read_bytes_per_cycle: float = 64.0   # [OFF] a cube core's MTE2 GM->L1: CANN gemm cycle model
                                                # (cache_tiling_cycle_model.cc, l0c2out::kHbmBandwidth = 64 B/cycle)
    aic_gm_start_on_misses_only: bool = True    # [OFF rule] the Nd2Nz start (aic_gm_read_startup) is the HBM
                                                # access's: a GM->L1 copy pays it in proportion to its bytes that
                                                # miss L2, so a copy L2 serves whole pays none, queued or not
                                                # (engine/timing.aic_copy_start; a tile's 128 B lines are in L2 whole
                                                # or not, so in practice all or nothing). Source: CANN's auto-tiling
                                                # cost model (https://github.com/hicann/ge, compiler/graph/optimize/
                                                # autofuse/att/gen_model_info/api_perf_register/v1/
                                                # ascir_api_perf_v1.cc): MoveGmToL1 = bytes / rate + kNd2NzStartCost
                                                # (210), MoveL2ToL1 = bytes / 110 with no start. On since 2026-12-07
                                                # (helper tstart), judged on benchmarks/validate_timing.py: 24 of 38
                                                # points and 12 of 15 steps either way, none in going out; T1 +62.9 ->
                                                # +25.4 %, T3 +84.3 -> +37.1 %, T4 +15.0 -> -1.0 %, step T3 -> T4
                                                # +27.5 -> +20.3 points, L2 split +13.9 / +8.5 -> +6.7 / +6.1 %, IBShare
                                                # B before +64.6 -> +58.0 %; M1 -6.8 / -5.1 -> -13.2 / -13.8 % (its B
                                                # tiles stream from HBM and keep their starts), CATLASS <128,256,256>
                                                # -16.4 -> -17.1 %, ND2NZ before -29.9 -> -32.0 %; the errors of the
                                                # points out sum to 609 (696 before). Off before 2026-12-07: with
                                                # 512 B L2 lines and byte-priced misses it took M1 to -26 %
    aic_gm_read_startup: int = 210              # [OFF] same model: kNd2NzStartCost = 210 cycles per GM->L1 copy
    aic_gm_start_hidden_when_queued: bool = False  # what-if: a copy queued behind the previous one overlaps its
                                                # start with that copy's data (engine/timing.gm_cycles). Judged on
                                                # benchmarks/validate_timing.py: it took M1 from -17 % to -37 % and the
                                                # M1 -> M2 step from -1 to -27 points, so a queued copy pays its start
                                                # (CANN's cycle model; its share that misses L2 since
                                                # aic_gm_start_on_misses_only). Audit 2026-12-07
                                                # (benchmarks/mte2_audit.py, CANN's core split): T1-T4 move the
                                                # official bytes in the official copies; their excess is this start paid serially (T3: 465 of 1,417
                                                # us) and gm_unaligned_efficiency on A rows inside one 512 B window.
                                                # With aic_gm_row_windows: T1 -1 %, T3 +4 %, T4 +3 %, step T3 -> T4
                                                # +0.9 points, but M1 -38 %, CATLASS -24 %, unaligned rows faster
                                                # (19 of 38, 7 of 15); with the window rule and a 450-cycle miss
                                                # latency 21 / 11, DataCopy and ND2NZ steps the wrong way: off
    gm_start_overlaps_previous: bool = False    # what-if: an MTE2 GM read (an AIV's GM -> UB, an AIC's GM -> L1;
                                                # aic_gm_start_overlaps_previous before 2026-12-07, AIC only) queued
                                                # behind the previous one (MTE2 busy when it is issued) starts under
                                                # that read's transfer, paying max(0, start - that transfer) (a DMA
                                                # engine with requests in flight; engine/timing.overlapped_start).
                                                # AIC only, judged alone on
                                                # benchmarks/validate_timing.py (2026-12-07, 24 of 38 and 12 of 15
                                                # before): T1 +63 -> +24 %, T3 +84 -> +29 %, T4 +15 -> +2 %, IBShare B
                                                # +65 / +54 -> +40 / +40 %, but M1 -7 / -5 -> -23 / -23 % (its copies
                                                # stream back to back just as T3's), CATLASS <256,128,256> -12 -> -17 %,
                                                # K-axis before -7 -> -18 %, step M1 -> M2 out: 20 of 38, 11 of 15: off.
                                                # Both paths (helper tstream, validate_timing.py --what-if
                                                # gm_start_overlaps_previous=True, 2026-12-07; 32 of 49 and 13 of 22
                                                # off): GM->UB [1,64] +365 -> +288 % (a 128 B row's 16 cycles hide 16
                                                # of the 80-cycle start: 80 cycles a copy, the chip ~20), [64,64] +108
                                                # -> +93 % (its cost is the 16-cycle package per 128 B row, not the
                                                # start), GM->L1 [64,64] +111 -> +50 %, T3 +37 -> +29 %, IBShare B
                                                # +58 / +54 -> +40 / +40 %; but M1 -13 / -14 -> -23 / -23 %, GM->L1 4
                                                # -11 -> -16 %, K-axis before -10 -> -18 % (4 points out), step M1 ->
                                                # M2 -5 -> -13 points, Add case (calibration) +3.3 / -4.2 -> -6.9 /
                                                # -8.6 %: 28 of 49, 12 of 22 (errors of the points out 1,254 -> 1,140
                                                # %). No public source found that describes MTE2 overlapping the
                                                # starts of consecutive copies (the DataCopy sample README, 优化点1,
                                                # names only fewer instruction issues for larger tiles): off
    gm_read_queued_head_cycles: float = 0.0     # what-if (0: off): a vector core's GM -> UB copy queued behind the
                                                # previous one (MTE2 busy when it is placed) pays this instruction
                                                # head instead of gm_read_startup, which only a copy issued to an
                                                # idle MTE2 pays (engine/timing.gm_cycles). Source: CANN's auto-tiling
                                                # cost model of DataCopy GM -> UB (https://github.com/hicann/ge,
                                                # compiler/graph/optimize/autofuse/att/gen_model_info/
                                                # api_perf_register/v1/ascir_api_perf_v1.cc, LoadApi: total MTE2 =
                                                # (S / T + h) x calls + H, h = 27.01 "指令头开销" per call, H the
                                                # "pipe启动头开销" once; perf_param_v1.cpp "Load" h = 27.01)
                                                # 27.01 on top of aiv_gm_miss_line_pieces (helper tsmall3, 2026-12-07,
                                                # validate_timing.py on every vector point): none in or out; DataCopy
                                                # GM->UB 1 (one 128 B row a copy) +322 -> +65 %, step GM->UB 1 -> 2
                                                # +30.7 -> +18.2 points, GM->UB 2 +0.5 -> -9.4 %, GM->UB 7 -1.7 -> -7.1
                                                # %, the Add calibration +3.3 / -4.2 -> -3.5 / -6.9 % (its y copies
                                                # queue behind x). CANN's model itself gives 42.9 cycles a 128 B copy
                                                # on 48 cores where the sample takes 20.6 (2x, as for its larger
                                                # tiles): its h is not this chip's per-copy cost either. Off
    gm_read_requests_in_flight: int = 1         # what-if (1: off): a vector core's GM -> UB reads (MTE2) in flight
                                                # at once. A read's start (gm_read_startup) is then a latency, request
                                                # to first data: its request leaves when the scalar issues it (and
                                                # any flag it waits on allows), once fewer than this many earlier
                                                # reads are unfinished, and its start runs under their transfers; the
                                                # pipe pays only what is left of it (engine/timing.in_flight_start).
                                                # 1: each read waits for the previous one to end, then pays its whole
                                                # start (the model before). No public figure for the MTE2's
                                                # outstanding requests was found (the guide publishes only the MTE1 and
                                                # M queue depths: ATLAS_A2_QUEUE_DEPTH; the DataCopy sample's README,
                                                # 优化点1, names "指令发射开销" and "循环控制开销", no size). With reads
                                                # in flight the Add case's y read runs its start under x's transfer, so
                                                # the Add calibration asks for gm_read_startup = 160 (one start a tile
                                                # where it paid two of 80: cases 1 / 2 +3.3 / -4.2 %, unchanged; with 80:
                                                # -6.9 / -8.6 %). 8 with 160 (helper tstream, 2026-12-07,
                                                # validate_timing.py --what-if gm_read_requests_in_flight=8 --what-if
                                                # gm_read_startup=160 --only on every point a vector core moves): a
                                                # stream of reads costs (160 + transfer) / 8 a read, the DataCopy
                                                # sample's GM->UB 1 (one 128 B row a read) +322 -> +1.2 % and step
                                                # GM->UB 1 -> 2 +30.7 -> +6.3 points: 8 is fitted there ([CAL], GM->UB
                                                # 1 would become calibration; GM->UB 1 with 4 / 6 / 16 in flight:
                                                # +102.5 / +35.0 / -49.4 %). No point or step in goes out, but GM->UB 2 +0.5 -> -14.5 %, GM->UB 6 -11.7 ->
                                                # -14.3 %, GM->UB 7 -1.7 -> -7.7 %, step GM->UB 2 -> 3 +5.8 -> -8.2
                                                # points (the sample's [64,64] reads pay ~75 cycles each over the HBM
                                                # share, which hidden starts no longer give); UB 8 +34 -> +29 %, Add
                                                # sample 5 / 6 +14.4 / +20.0 -> +11.1 / +16.7 %: off (a fitted depth, two
                                                # points at the edge)
    aiv_gm_miss_line_pieces: bool = True        # [OFF rule, DER size] with aiv_gm_miss_row_packages: a piece of a GM
                                                # -> UB row that starts on an L2 line (l2_line_bytes; Atlas A2 128 B
                                                # [DER]) and covers whole lines costs its lines (a 128 B line: 1/4 of
                                                # a 512 B package), not whole packages, when the copy goes through L2
                                                # (a copy that bypasses it, CACHE_MODE_DISABLE, keeps whole packages);
                                                # engine/timing._line_pieces. Source: CANN's auto-tiling cost model
                                                # prices DataCopy GM -> UB by its bytes, S / T + h, for small blocks
                                                # too (https://github.com/hicann/ge, compiler/graph/optimize/autofuse/
                                                # att/gen_model_info/api_perf_register/v1/perf_param_v1.cpp "Load",
                                                # "LoadSmallBlk"; ascir_api_perf_v1.cc LoadApi), no 512 B package; A2's
                                                # L2 allocates 128 B lines (the DataCopy sample's counters). The
                                                # DataCopy sample, GM -> UB tile [64,64] (DK examples/.../
                                                # 04_memory_access/data_copy, README 优化点1): 128 B rows on lines, 8.3
                                                # cycles a row measured, 16 with whole packages. Judged on
                                                # benchmarks/validate_timing.py (helper tsmall3, 2026-12-07; off: 32 of
                                                # 49 points, 13 of 22 steps): 33 / 14, none lost: GM->UB 2 +107.6 ->
                                                # +0.5 %, step GM->UB 2 -> 3 +50.2 -> +5.8 points, GM->UB 1 +365 ->
                                                # +322 %, ND2NZ on the AIV after -10.1 -> -10.3 %; the step GM->UB 1 ->
                                                # 2 (out) +22.3 -> +30.7 points: GM->UB 1 keeps its 80-cycle starts.
                                                # False: whole packages (the rule before)
    aic_gm_miss_line_pieces: bool = False       # what-if: the same for a GM -> L1 row's missing bytes
                                                # (aic_gm_miss_row_packages). CANN's gemm cycle model prices a 128 B
                                                # Nd2Nz burst as a whole 512 B package (GetBandwidthUsageNd2Nz).
                                                # With aiv_gm_miss_line_pieces (validate_timing.py, 2026-12-07): 30 of
                                                # 49, 14 of 22: GM->L1 1 +111 -> +28 % (its 210-cycle starts stay),
                                                # T1 +25 -> +22 %, T3 +37 -> +25 %, step T3 -> T4 +20 -> +15 points,
                                                # IBShare B +58 / +54 -> +46 / +47 %; but M1 -13 / -14 -> -22 / -23 %
                                                # (out), MTE2 Preload after -10 -> -21 % (out), step M1 -> M2 (aic_time)
                                                # -5 -> -14 points (out): off
    aic_gm_hit_rows_unaligned_free: bool = False  # what-if: the bytes of a GM->L1 copy that L2 serves skip
                                                # gm_unaligned_efficiency (the 512 B alignment is the HBM request's;
                                                # Atlas A2's L2 serves 128 B lines; CANN's auto-tiling MoveL2ToL1 has
                                                # no alignment term, but no source says hits are free of it). On top
                                                # of aic_gm_start_on_misses_only (validate_timing.py, 2026-12-07): T1
                                                # +25 -> +3 %, T3 +37 -> +22 %, T2 (calibration) +30 -> +10 %, step T3
                                                # -> T4 +20 -> +14 points; but M1 -13 / -14 -> -17 / -17 % (out): 23 of
                                                # 38, 12 of 15, so off
    aic_nd2nz_unaligned_inner_row_cycles: float = 0.0  # what-if: an Nd2Nz GM->L1 row of a matrix whose inner
                                                # axis (the row pitch) is not a multiple of aic_nd2nz_inner_align
                                                # costs this many cycles more (engine/timing.nd2nz_inner_rows): G
                                                # Matmul性能调优案例/AIV核上的ND2NZ格式转换.md ("内轴非256字节对齐"
                                                # ... "随路ND2NZ指令存在带宽利用率低的问题"), which names the effect,
                                                # not its size; rows that are one contiguous run of 64-256 B merge
                                                # into one burst (CANN's gemm cycle model, GetMte2Al1Cycle
                                                # can_merge_min/max_burst_length) and pay nothing more
    aic_nd2nz_inner_align: int = 256            # [OFF] the same page: the inner-axis alignment on-path ND2NZ needs
    aic_gm_offblock_hits_as_misses: bool = True   # [EST rule, no number]: a GM->L1 copy whose rows start
                                                # off a 32 B block (DATA_BLOCK_BYTES) gets no faster path from L2:
                                                # its bytes L2 serves cost what missing ones do (the 512 B window
                                                # pieces, aic_gm_miss_row_packages) in place of aic_row_cycles (G
                                                # Matmul性能调优案例/AIV核上的ND2NZ格式转换.md: the on-path Nd2Nz
                                                # "存在带宽利用率低的问题" off alignment, no size). The ND2NZ case's
                                                # AIC_MTE2 mean (130.77 us, 91 % of its rows L2 hits in the model)
                                                # is what the DataCopy sample's all-miss rows cost (RESULTS 1c).
                                                # benchmarks/validate_timing.py (2026-12-07 16:55-17:08 UTC): 38 of
                                                # 53 points either way, 16 -> 17 of 23 steps: ND2NZ step -18.1 ->
                                                # -9.8 points (in), ND2NZ before -32.0 -> -24.0 % (out), DataCopy
                                                # N=12287 -4.1 -> +8.2 %, its window step -6.6 -> -0.0 points
    aic_gm_row_floor_cycles: float = 2.0        # [CAL] a GM->L1 row (burst) costs its bytes at the path rate, at
                                                # least this (CANN's GetBandwidthUsageNd2Nz prices a 128 B row as a
                                                # 512 B package: 8 cycles); fitted to the Tiling-strategy case T2
                                                # (G Matmul性能调优案例/Matmul算子优化Tiling策略.md: its B rows are
                                                # 1.06 M L2-hit rows of 128 B a core, 3 in 4 off 512 B, beside 0.26 M
                                                # of 512 B). Re-fitted 2026-12-07 on today's model (3.0, fitted when
                                                # the 210-cycle start was paid by every copy, left T2 at +27 / +30 %):
                                                # 1.9 -> T2 aic_time / aic_mte2_time -3.1 / -0.8 %, 2.0 -> -0.4 /
                                                # +2.0 %, 2.1 -> +2.3 / +4.7 %; 0: whole packages
    aic_gm_unaligned_row_factor: float = 2.0    # [EST] a GM->L1 (Nd2Nz) row whose GM start is not 32 B aligned
                                                # moves this many times its bytes on the path: each 32 B C0 piece
                                                # it puts in L1 spans two 32 B GM blocks (DATA_BLOCK_BYTES) and
                                                # takes both (engine/timing.unaligned_rows). The guide names the
                                                # effect, not its size: the on-path Nd2Nz "存在带宽利用率低的问题"
                                                # when the inner axis is not aligned (G Matmul性能调优案例/
                                                # AIV核上的ND2NZ格式转换.md, validated there, not fitted); 1: off
    aic_gm_miss_latency_cycles: int = 0         # what-if: a GM->L1 copy any of whose bytes miss L2 starts this much
                                                # later (an HBM round trip beyond the L2 start aic_gm_read_startup;
                                                # G names the mechanism, "L2 Cache ... 减少访问延迟", not its size).
                                                # 450 [CAL, split-K document's one-core aic_mte2_time, 13.72 us]
                                                # on benchmarks/validate_timing.py: M1 -15.7 -> +8.0 %, M2 -7.6 ->
                                                # -0.9 %, split-K -51 -> -26 / -33 %, but K-axis staggered after
                                                # +13.3 -> +17.7 %, L2 split +45 / +54 -> +63 / +59 %, CATLASS +2.5
                                                # -> +11.9 %, T1-T4 +1-2 points: 18 of 30 either way, so off
    aic_gm_row_windows: bool = False            # what-if [OFF mechanism]: a GM->L1 row crossing 512 B windows
                                                # (gm_burst_align) costs a whole window per window it touches, one
                                                # inside a window its bytes, in place of the flat
                                                # gm_unaligned_efficiency (engine/timing.aic_window_rows): G
                                                # 避免同地址访问.md ("地址请求会按照512字节粒度对齐后进行处理"); DK
                                                # examples/.../04_memory_access/data_copy (A2, GM->L1 rows of 512 B
                                                # at N 12287: 214.5 -> 422.5 us = 2 windows a row). Judged on
                                                # benchmarks/validate_timing.py (2026-12-06): T1 +79 -> +56 %, T3
                                                # +148 -> +141 %, ND2NZ-on-AIV -60 -> -51 %, step T3 -> T4 12 -> 5
                                                # points, but T4 +106 -> +125 %, M1 -16 / -14 -> -23 / -21 % (its A
                                                # copies lose the 0.7), step M1 -> M2 6 -> 12 points: 17 of 31 points
                                                # in (18 without), 7 of 11 steps either way; so off
    aic_gm_l2_hit_bytes_per_cycle: float = 110.0  # [OFF] a cube core's GM->L1 rate for bytes L2 serves (engine/
                                                # timing.aic_row_cycles), on since 2026-12-07 with gm_window_turns (see
                                                # there: the pair gains a point and two steps); was the path rate 64,
                                                # as for misses (kHbmBandwidth). 110 [OFF: CANN's auto-tiling cost
                                                # model, kMoveL2ToL1 = 110 B/cycle: https://github.com/hicann/ge,
                                                # compiler/graph/optimize/autofuse/att/gen_model_info/api_perf_register/
                                                # v1/ascir_api_perf_v1.cc] alone moved CATLASS from +2.5 % / +0.3 % to
                                                # -22 % / -18 % and M2 from -10 % to -16 %; with gm_hit_waits_for_fill
                                                # (below): -19 / -13 % and -3 %; with aic_gm_start_on_misses_only, see
                                                # there
    aic_gm_miss_row_packages: bool = True       # [OFF rule, OFF cost] the bytes of a GM->L1 row that miss L2 (or
                                                # bypass it) cost whole HBM packages, not their bytes: the row is cut
                                                # at the 512 B windows it touches (gm_burst_align; G 内存访问/
                                                # 避免同地址访问.md: "地址请求会按照512字节粒度对齐后进行处理"), each piece
                                                # takes packages of 512, 256, 128 B and one for the rest, each 512 B /
                                                # aic_gm_read_bytes_per_cycle = 8 cycles (CANN's gemm cycle model:
                                                # GetBandwidthUsageNd2Nz, kHbmBandwidth = 64, in hicann's cache tiling
                                                # cycle estimate); the cut replaces gm_unaligned_efficiency and
                                                # aic_gm_unaligned_row_factor for the missing share (engine/timing.
                                                # aic_miss_packages); bytes L2 serves keep aic_row_cycles (CANN's
                                                # MoveL2ToL1: bytes / 110, no packages). The DataCopy sample (DK
                                                # examples/.../04_memory_access/data_copy, A2, no parameter fitted):
                                                # 128 B rows bypassing L2, 1 package: 8 cycles (measured 7.9 a row);
                                                # 512 B rows 2 B off a window, ~4 packages: 32 (31.8); on windows: 1
                                                # package, HBM-bound. Judged on benchmarks/validate_timing.py
                                                # (2026-12-07, 20 of 38 points and 10 of 15 steps before): alone 22 /
                                                # 10; with the A2 L2 line of 128 B (Ascend910B below) 24 / 12: the
                                                # DataCopy points and both its steps in, split-K -51 -> -34 / -39 %,
                                                # MTE2 Preload -30 / -24 -> -17 / -10 %, ND2NZ step -27 -> -0.3 points;
                                                # T1 +60 -> +63 %, T3 +75 -> +84 %, IBShare B +56 / +49 -> +65 / +54 %
    aiv_gm_miss_row_packages: bool = True       # [OFF rule, OFF cost] aic_gm_miss_row_packages on the vector path:
                                                # the bytes of a GM->UB row (a DataCopy/DataCopyPad burst on an AIV)
                                                # that miss L2 (or bypass it) cost the HBM packages of the row's
                                                # pieces between 512 B windows, 512 B / gm_read_bytes_per_cycle = 16
                                                # cycles each, a row that starts off a window and runs into the next
                                                # at gm_unaligned_efficiency, in place of the burst's packages at 0.7
                                                # whenever the copy starts off 512 B (engine/timing.aiv_miss_rows);
                                                # bytes L2 serves as before. Source: G 内存访问/避免同地址访问.md
                                                # ("MTE2、MTE3、Scalar等单元访问Global Memory数据时，其地址请求会按照
                                                # 512字节粒度对齐后进行处理": the AIV's MTE2 too), G 内存访问/GM地址
                                                # 尽量512B对齐.md (GM->UB at 32 B alignment: as little as 70 %); no
                                                # parameter fitted. Judged on benchmarks/validate_timing.py with the
                                                # DataCopy sample's GM->UB points (DK examples/.../04_memory_access/
                                                # data_copy, 2026-12-07; off: 28 of 49 points, 13 of 22 steps): 31 /
                                                # 13. GM->UB 4 (2 KB rows off windows) -29.9 -> +0.4 % and its step
                                                # -26.8 -> +4.9 points; 7 (128 B rows inside windows, L2 off) +29.9 ->
                                                # -1.7 %, 8 +75.9 -> +34.3 %, 2 +170 -> +108 %, 1 +390 -> +365 %; ND2NZ
                                                # on the AIV after -29.6 -> -9.4 % but its step -0.3 -> -17.9 points
                                                # (before stays -30 %). The cut without the 0.7 on split rows: 29 / 13
                                                # (GM->UB 4 -28 %). Add cases, bank sample unchanged
    aiv_gm_l2_hit_bytes_per_cycle: float = 0.0  # a vector core's GM->UB rate for the bytes L2 serves (engine/
                                                # timing.aiv_miss_rows: the hit share of a copy's packages at this rate
                                                # instead of gm_read_bytes_per_cycle); 0: the path rate (the 910 and
                                                # 310B profiles, and the 910B before 2026-12-07); Ascend910B: 110
                                                # [EST], on since 2026-12-07. Still bounded by the core's share of
                                                # l2_bytes_per_cycle (48 AIV copying: 3,784 / 48 = 79 B/cycle each).
                                                # Source: no public figure for the AIV. CANN's auto-tiling cost table
                                                # (https://github.com/hicann/ge, compiler/graph/optimize/autofuse/att/
                                                # gen_model_info/api_perf_register/v1/ascir_api_perf_v1.cc,
                                                # kBandwidthMap) gives MoveGmToUb and MoveGmToL1 one GM rate (32) and
                                                # only the cube path an L2 entry, MoveL2ToL1 = 110: 110 is that entry
                                                # by analogy, not a measurement; the guide says a hit is several times
                                                # faster on the vector path too (G 内存访问/设置合理的L2-CacheMode.md:
                                                # "L2 Cache的带宽相比GM的带宽有数倍的提升，因此当数据命中L2 Cache时，
                                                # 数据的搬运耗时会优化数倍", the Add sample's page). 55 (one 110 B/cycle
                                                # port shared by 1 AIC + 2 AIV) would be as defensible (UB 6 +1.9 %, step 5 -> 6 -4.7 points); the DataCopy
                                                # sample's README estimate (L2 ~5.2 TB/s over 48 AIV = 59 B/cycle each)
                                                # sits between. Judged on benchmarks/validate_timing.py (2026-12-07,
                                                # helper tl2aiv): 32 -> 33 of 49 points, 13 -> 14 of 22 steps, none
                                                # lost: DataCopy GM->UB 6 (each N quarter 4 times, 75 % L2 hits)
                                                # +39.8 -> -11.7 %, step UB 5 -> 6 -22.8 -> +1.8 points; UB 4 +0.4 ->
                                                # -2.0 %, ND2NZ after -10.1 -> -11.6 %, its step -19.6 -> -18.3 points
                                                # (still out); Add cases and every cube-only point unchanged
    hbm_streams_by_pipe: bool = False       # what-if: the streams sharing HBM bandwidth are each GM pipe's duty times
                                            # its own HBM share (the HBM bytes its transfers moved, write-backs of
                                            # the dirty victims they evicted included, over its bytes; at most 1),
                                            # not every GM pipe's duty times the read-miss share (engine/timing.
                                            # hbm_streams): writes that land in L2 leave HBM to the reads
                                            # (add_high_performance README: "z 写数据时会命中 L2 Cache，而 L2 的带宽
                                            # 很高，所以写的带宽较高"). Judged 2026-12-07 (RESULTS 1c): alone 36 of
                                            # 53 / 17 of 23 (Add Cases 3-4 and M1 out); with l2_warm_launch the Add
                                            # points all in, the cube documents out
    hbm_streams_live_blocks: bool = False   # what-if: the streams sharing HBM (engine/timing.gm_cycles) are the
                                            # blocks of the wave still running at the copy's start (engine/timing.
                                            # live_blocks), not every block of the wave: when a launch's tiles do
                                            # not divide among the cores, the blocks with one more tile stream alone
                                            # at their path rate (aic_gm_read_bytes_per_cycle) once the others end.
                                            # Source: CATLASS docs/zh/1_Practice/11_matmul_optimization.md,
                                            # TileShape调整 (24 tiles on 20 AIC: "4个需要计算两个基本块"); the HBM
                                            # is one shared bandwidth (hbm_bytes_per_cycle, L2-Cache切分.md)
    hbm_streams_exclude_starts: bool = False  # what-if: the streams sharing HBM (engine/timing.gm_cycles) count a
                                            # core's GM pipes busy moving bytes, not the starts they paid (a start
                                            # is the request's latency: no bytes move on HBM for it), so cores that
                                            # spend much of their time in starts leave the HBM bandwidth to those
                                            # moving data. With aic_gm_miss_line_pieces (helper tstream,
                                            # 2026-12-07): DataCopy GM->L1 1 +111 -> -0.9 % (210 + 64 x 2 cycles a
                                            # copy, the chip's 341), but the Add calibration case 2 -4.2 -> -16.1 %
                                            # (its 80-cycle starts no longer count as streams on HBM): off
    l2_warm_launch: bool = False            # what-if: the launch is measured as a profiler measures it, after the same
                                            # kernel ran on the same buffers (msopprof's warm-up and replay run the
                                            # kernel "在同一块GM内存上重复执行": the official atomic_add_perf sample's
                                            # README, examples/03_simt_api/.../atomic_add_perf): it starts with the L2
                                            # that run left (resident lines, dirty ones too), not a cold one
                                            # (api/launch._warm_l2: one timing-only run first). Judged 2026-12-07
                                            # (RESULTS 1c): 28 of 53 / 13 of 23: every cube launch whose inputs fit
                                            # in L2 then reads hits (M1 -61 %)
    atomic_rmw_at_l2: bool = True           # [EST] an atomic write to GM (SetAtomicAdd + Fixpipe/DataCopy) first reads
                                            # its lines through L2, filling what L2 lacks from HBM, then writes
                                            # (engine/atomics.py; same-window atomics of several cores in turn);
                                            # False: only the same-window turns. No public cost figure found
    hbm_bytes_per_cycle: float = 865.0      # [OFF] HBM 1.6 TB/s (L2-Cache切分.md; = 865 B/cycle at 1.85 GHz), booked
                                            # by the cores copying (engine/bandwidth.py); was 760 [CAL] as a static share
    # --- L2 cache between GM and every core's MTE2/MTE3/Fixpipe (engine/l2.py) ---
    l2_line_bytes: int = 512                # [EST] bytes L2 allocates and hits by (the 512 B GM window); Atlas A2: 128 [DER]
    gm_hit_waits_for_fill: bool = True      # [OFF rule, EST model] a GM read hitting L2 lines that another core's
                                            # miss is still filling ends with that fill (the same-address rule, G
                                            # 内存访问/避免同地址访问.md; engine/bandwidth.LineFills). Judged on
                                            # benchmarks/validate_timing.py: with the hit rate at the path rate it
                                            # moves M1/M2/L2 split <= 1 point toward the measurements and no trace
                                            # hash; with a hit rate of 110 it turns that what-if's 15/30 points and
                                            # 6/10 steps into 17/30 and 7/10 (CATLASS <256,128,256> and K-axis
                                            # before back within 15 %, the K-axis step within 10 points)
    gm_fill_wait_in_time_order: bool = True     # [EST model] the fill wait (gm_hit_waits_for_fill) in simulated
                                            # time order (causality): L2 decides hit and miss in the order reads are
                                            # priced (up to engine/scheduler.TIME_SLICE ahead of simulated time), so a
                                            # "hit" may be issued before the read that filled its lines; on the chip
                                            # that earlier request fetches them: its lines land one fill time after
                                            # its own request, and reads issued after it wait for that, not for the
                                            # later request's fill (engine/bandwidth.LineFills.read). On since
                                            # 2026-12-07 (helper tfill2): alone T3 +17.2 -> +16.3 %, M1 aic_time
                                            # -14.6 -> -18.1 %; with gm_fill_wait_joins_turns +15.9 / -16.4 % (M1
                                            # out: a point traded for causality, RESULTS 1c); False: the wait in
                                            # pricing order
    gm_fill_wait_joins_turns: bool = True   # [EST model] a read that waits for another core's fill and for that
                                            # core's turns on the same 512 B windows (gm_window_turns) waits once,
                                            # to the later of the two ends, not their sum: the fill is the other
                                            # request's turn (G 内存访问/避免同地址访问.md: requests to one window
                                            # are processed serially), whose hold already holds the HBM round trip
                                            # (gm_window_miss_hold_cycles) the fill waits for; engine/timing.
                                            # gm_cycles. On since 2026-12-07 (helper tfill2): no point or step
                                            # moves in or out (T3 +16.3 -> +15.9 %, step T3 -> T4 +10.9 -> +10.3);
                                            # False: the two waits summed
    gm_window_turns: bool = True            # [OFF rule, EST model] MTE2/MTE3 GM requests of several cores to one
                                            # 512 B window (gm_burst_align) at once are served in turn (G 内存访问/
                                            # 避免同地址访问.md: "多个请求会被串行处理"; engine/bandwidth.
                                            # WindowTurns): each request holds its windows for the two holds below.
                                            # Judged on benchmarks/validate_timing.py (2026-12-07, with the DataCopy
                                            # sample's optimisation point 4 added; 18 of 37 points, 8 of 14 steps
                                            # before): alone 19 / 9 (M1 aic_time -15.7 -> -14.3 %, the rotated-order
                                            # step +0.0 -> +28.6 % vs +20.5 %, T1-T4 within 0.3 points) but K-axis
                                            # staggered loads still lose (-1.4 %, a wrong lesson); the L2-hit rate 110
                                            # alone 18 / 9; both (on, with aic_gm_l2_hit_bytes_per_cycle 110) 19 / 10
                                            # and no wrong lesson (staggered +6.1 % vs +13.2 %, aligned rows +10.3 %);
                                            # with aic_gm_start_on_misses_only too 18 / 9. Cost: a transfer over many
                                            # windows ~20 us of numpy (256^3 matmul +25 % CPU, add_custom +15 %)
    gm_window_bytes_per_cycle: float = 64.0     # [EST] a window's bytes pass at one AIC's GM path rate
                                            # (aic_gm_read_bytes_per_cycle, kHbmBandwidth): one request at a time
    gm_window_miss_hold_cycles: float = 210.0   # [EST] a request that misses L2 holds its windows for the HBM round
                                            # trip: kNd2NzStartCost (aic_gm_read_startup, CANN gemm cycle model),
                                            # the start that CANN's auto-tiling model charges only to copies from
                                            # HBM (MoveGmToL1 vs MoveL2ToL1, see aic_gm_start_on_misses_only)
    l2_bytes_per_cycle: float = 3784.0      # [OFF] L2-Cache切分.md assumes ~7 TB/s (= 3,784 B/cycle at 1.85 GHz)
    hbm_share_prior_cycles: float = 2000.0  # [EST] how long a core is assumed to stream before its own duty cycle counts
    launch_overhead_cycles: int = 1850      # [EST] host launch to the kernel starting on the device (1 us); not part of
                                            # the kernel's device time (LaunchResult.us, what msprof and the calibration
                                            # figures report) but of LaunchResult.launch_us; no published figure found
    task_head_cycles: int = 0               # what-if (0: off): the head overhead a profiled Task Duration holds before
                                            # the kernel computes (core start, instruction-fetch TLB misses, same-
                                            # address conflicts, resource set-up), added to LaunchResult.us, not to any
                                            # core's time. [OFF figure] "以Atlas A2...为例，满核头开销约为20~21微秒"
                                            # (the Task Duration of an empty kernel on every core): the guide's
                                            # 分析性能数据 page, 方法四 (docs/zh/guide/算子实践参考/性能分析/ in
                                            # https://github.com/cannmirror/asc-devkit); 20.5 us = 37,925 cycles.
                                            # Off: the [CAL] Add figures are task times, so the fitted rates hold the
                                            # head already; judged in benchmarks/RESULTS.md 1c
    gm_unaligned_efficiency: float = 0.7    # [OFF] 32 B- vs 512 B-aligned GM: as little as 70 %
    burst_overhead_cycles: int = 8          # [EST] extra cost per burst of a strided on-chip copy (GM copies: packages)
    l1_to_l0a_bytes_per_cycle: float = 256.0  # [OFF] CANN gemm cycle model, l0c2out (A2): kMte1L0aBandWidth
    l1_to_l0b_bytes_per_cycle: float = 128.0  # [OFF] same: kMte1L0bBandWidth (PTO-ISA A2/A3 agrees: 256 / 128)
    mte1_startup: int = 26                  # [OFF] same: kMte1StartCost
    l1_to_bt_bytes_per_cycle: float = 64.0    # [EST] MTE1 L1->BT (bias, at most 1 KB: the startup dominates)
    ub_to_l1_bytes_per_cycle: float = 256.0   # [EST] 310P compile-info ub->l1
    ub_to_ub_bytes_per_cycle: float = 128.0   # [EST]
    fix_startup: int = 40                   # [EST] Fixpipe startup
    fix_gm_bytes_per_cycle: float = 64.0    # [DER] Fixpipe L0C->GM per output byte of fp32->fp16: L0C read at 256 B
                                            # and out at 128 B per cycle (CANN gemm cycle model kMte1L0cBandWidth,
                                            # kMte1FixPipeBandWidth): m*n*4/256 + m*n*2/128 = (m*n*2) / 64
    vec_startup: int = 20                   # [CAL] vector instruction startup
    ub_bank_groups: int = 16                # [OFF] arch 2201 UB: 16 groups x 3 banks (engine/ubbanks.py); 0: no bank model
    vec_cycles_per_repeat: dict = field(default_factory=lambda: {
        "simple": 1.0,          # [DER] Add case: one 256 B repeat per cycle per AIV
        "transcendental": 4.0,  # [EST] Exp, Ln, Sqrt, Div, Reciprocal
        "reduction": 2.0,       # [EST] ReduceMax/ReduceSum/WholeReduceSum
        "cast": 2.0,            # [EST] Cast
    })
    cube_startup: int = 30                  # [EST]
    # --- the Matmul high-level API's kernel head (Matmul.Init, on the scalar pipe before the first copy) ---
    matmul_init_cycles: int = 4042          # [CAL] Init's scalar set-up: with a constant tiling the first MTE2 starts
                                            # at 2.185 us (G Matmul性能调优案例/Matmul高阶API使能Tiling全量常量化.md,
                                            # M128 N30720 K64 on 24 AIC; x 1.85 GHz)
    matmul_tiling_copy_cycles: int = 2499   # [CAL] same doc: the TCubeTiling copied from the host moves the first
                                            # MTE2 to 3.536 us (+1.351 us); constant tiling is not modelled, so every
                                            # Init pays both
    # --- MIX mode: each Matmul call on the AIV is a KFC message to the AIC's server (api/highlevel/matmul_kfc.py) ---
    kfc_post_cycles: int = 200              # [EST] the AIV's scalar fills one message in the GM message queue and
                                            # flushes its cache line (matmul_client.h PostMessage)
    kfc_serve_cycles: int = 1490            # [CAL] the AIC's server takes one message: polls the two AIV queues,
                                            # invalidates and reads the message, dispatches it (asc-devkit
                                            # impl/adv_api/detail/kfc/kernel_kfc.h, KfcServer::Run); fitted on
                                            # G Matmul性能调优案例/Matmul高阶API使能纯Cube模式.md (MIX aic_time
                                            # 17.85 us, M128 N30720 K64 on 48 AIV / 24 AIC; 12.7 us with 0).
                                            # The IBShare document's one-AI-Core MIX run, with the same 8 messages,
                                            # leaves far less (benchmarks/RESULTS.md 1c): not one constant
    cube_fractals_per_cycle: float = 1.0    # [OFF] 4096 fp16 MAC/cycle = one 16x16x16 fractal

    @property
    def clock_hz(self) -> float:
        return self.clock_ghz * 1e9

    def cores_for(self, core_type: str) -> int:
        """Physical cores that run a kernel of this type ("AIV", "AIC" or "MIX" groups)."""
        if core_type == "AIV":
            return self.aiv_count
        return self.aic_count

    def cycles_to_us(self, cycles: float) -> float:
        return cycles / (self.clock_ghz * 1e3)


def Ascend910B() -> ChipProfile:
    """Atlas A2 / 910B2-like, separated architecture (arch 2201). The default."""
    return ChipProfile(
        name="Ascend910B",
        system_counter_hz=50e6,       # [OFF] GetSystemCycle(ISASI).md (Atlas A2)
        npu_arch=2201,
        separated=True,
        pipe_queue_depth=dict(ATLAS_A2_QUEUE_DEPTH),    # [OFF] the 2201 page's 32-deep MTE1 and M queues
        aic_count=24,                 # [OFF] torchair limit_core_num.md; 910B2 ini ai_core_cnt=24
        aiv_count=48,                 # [OFF] same; vector_core_cnt=48 (1:2 ratio)
        clock_ghz=1.85,               # [DER] Add case study implies ~1.85 GHz (ini cube_freq 1800 [EST])
        ub_bytes=192 * KB,            # [OFF] DK kernel_utils_constants.h TOTAL_UB_SIZE
        ub_usable_bytes=184 * KB,     # [OFF] 8 KB reserved as tmp buffer
        l1_bytes=512 * KB,            # [OFF] same header
        l0a_bytes=64 * KB,            # [OFF]
        l0b_bytes=64 * KB,            # [OFF]
        l0c_bytes=128 * KB,           # [OFF]
        l2_bytes=192 * MB,            # [EST] 910B2 platform ini l2_size; [OFF] the L2-Cache切分 guide assumes 192 MB
        gm_bytes=64 * GB,             # [EST] 910B2 platform ini memory_size
        aiv_gm_l2_hit_bytes_per_cycle=110.0,  # [EST] CANN's MoveL2ToL1 rate on the AIV's MTE2 by analogy (see the field)
        l2_line_bytes=128,            # [DER] L2 hits and misses count per 128 B: the DataCopy sample's A2 L2Cache
                                      # counters (DK examples/.../04_memory_access/data_copy, GM->L1 scenario 4:
                                      # r0 + r1 read_cache_hit + miss_allocate = 9,437,784 for 1,207,959,552 B read,
                                      # 128.0 B each; GM->UB scenario 5 the same). Was 512 [EST]. Judged with
                                      # aic_gm_miss_row_packages (see there); alone: 20 / 11 of 38 / 15 (from 20 /
                                      # 10), no point further off by more than 0.1 (DataCopy N=12287 -39 -> -31 %,
                                      # ND2NZ before -52 -> -46 %, MTE2 Preload -30 / -24 -> -27 / -21 %)
    )


def Ascend910() -> ChipProfile:
    """Ascend 910 (arch 1001), coupled: one AI Core holds cube and vector units."""
    return ChipProfile(
        name="Ascend910",
        npu_arch=1001,
        separated=False,
        aic_count=32,                 # [OFF] Hot Chips 2019: 32 Da Vinci cores
        aiv_count=32,                 # coupled: the vector unit is inside each AI Core
        clock_ghz=0.98,               # [DER] 256 TFLOPS / (32 * 4096 * 2)
        ub_bytes=256 * KB,            # [OFF] DK kernel_utils_constants.h
        ub_usable_bytes=248 * KB,     # [OFF]
        l1_bytes=1 * MB,              # [OFF]
        l0a_bytes=64 * KB,            # [OFF]
        l0b_bytes=64 * KB,            # [OFF]
        l0c_bytes=256 * KB,           # [OFF]
        l2_bytes=32 * MB,             # [EST]
        gm_bytes=32 * GB,             # [EST] 32 GB HBM2
        hbm_bytes_per_cycle=1200.0,   # [EST] ~1.2 TB/s at 0.98 GHz
        launch_overhead_cycles=980,   # [EST] 1 us, as on 910B
        l2_bytes_per_cycle=4800.0,    # [EST] 4x HBM, as on 910B (optimisation.md s3: L2 reads 3-4x GM)
        ub_bank_groups=0,             # its UB bank layout is not published: no bank-conflict model
        event_ids=4,                  # [OFF] SetFlag-WaitFlag(ISASI).md: Atlas 训练系列产品 0-3
    )


def Ascend310B() -> ChipProfile:
    """Ascend 310B (arch 3002), edge inference, coupled mode."""
    return ChipProfile(
        name="Ascend310B",
        npu_arch=3002,
        separated=False,
        aic_count=1,                  # [EST] one AI Core on the Orange Pi AIpro class boards
        aiv_count=1,
        clock_ghz=1.0,                # [EST]
        ub_bytes=248 * KB,            # [OFF] DK kernel_utils_constants.h
        ub_usable_bytes=248 * KB,     # [OFF]
        l1_bytes=1 * MB,              # [OFF]
        l0a_bytes=64 * KB,            # [OFF]
        l0b_bytes=64 * KB,            # [OFF]
        l0c_bytes=128 * KB,           # [OFF]
        l2_bytes=4 * MB,              # [EST]
        gm_bytes=8 * GB,              # [EST] LPDDR4X
        gm_read_bytes_per_cycle=17.0,   # [EST] 310P compile-info ddr 17
        gm_write_bytes_per_cycle=17.0,  # [EST] 310P compile-info ub->ddr 17
        hbm_bytes_per_cycle=51.0,     # [EST] ~51 GB/s LPDDR4X
        launch_overhead_cycles=1000,  # [EST] 1 us, as on 910B
        l2_bytes_per_cycle=342.0,     # [EST] 6.7x DDR: the l2/ddr ratio (114/17) of the 310P compile-info
        ub_bank_groups=0,             # its UB bank layout is not published: no bank-conflict model
    )


CHIPS = {"Ascend910B": Ascend910B, "Ascend910": Ascend910, "Ascend310B": Ascend310B}


def get_chip(chip: "ChipProfile | str | None") -> ChipProfile:
    """Resolve a profile, a profile name or None (the default 910B)."""
    if chip is None:
        return Ascend910B()
    if isinstance(chip, ChipProfile):
        return chip
    try:
        return CHIPS[chip]()
    except KeyError:
        raise ValueError(f"unknown chip {chip!r}; choose one of {sorted(CHIPS)}") from None
