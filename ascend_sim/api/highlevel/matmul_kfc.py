"""MIX mode of the Matmul high-level API (默认MIX模式): the AIV calls, the AIC's KFC server computes; and IBShare.

In a kernel launched with ``core="MIX"`` on a separated chip (Atlas A2), ``REGIST_MATMUL_OBJ`` does what its
macro does in Ascend C (asc-devkit impl/adv_api/detail/kfc/kfc_register_obj.h, ``REGIST_CUBE_OBJ``):

- on the **AIC** it starts the KFC server (``KfcServer``): a loop that takes the messages of the group's two
  AIV one at a time and runs each on the cube core with the Matmul object it registered (here a
  ``MatmulServerImpl``: the pure-Cube ``Matmul`` of matmul.py, so the AIC's work is timed as in 纯Cube模式),
  until both AIV have ended (each client's destructor sends SERVICE_QUIT); then the AIC returns from the kernel;
- on each **AIV** the object becomes a ``MatmulClient``: ``Init`` (inside the macro) posts MMFUN_INIT;
  ``SetTensorA/B``, ``SetBias``, ``SetTail`` ... only fill the next message's body; ``Iterate`` posts MMFUN_ITERATE,
  ``GetTensorC`` MMFUN_GET_TENSOR_C, ``IterateAll`` MMFUN_ITERATE_ALL and ``End`` MMFUN_END
  (include/adv_api/matmul/matmul_client.h). ``GetTensorC`` and ``IterateAll`` are synchronous: the AIV waits for
  the server's cross-core flag after the Fixpipe wrote C to GM.

Costs (hw/chips.py): the AIV's scalar writes a message (``kfc_post_cycles``); the server takes each message
(``kfc_serve_cycles``: polling the queues, reading the message past the data cache, dispatching); a MMFUN_INIT
copies the client's TCubeTiling from GM and runs Init again on the AIC (matmul_server_impl_c220.h ``Init(msg)``:
``matmul_tiling_copy_cycles + matmul_init_cycles``); the answer is a cross-core flag (``cross_core_flag_cycles``).
The server has one Matmul object per registration (the real one has one per AIV, matmul_server_aux.h
``cubeObj[MIX_NUM]``, each set up again on its MMFUN_INIT) and serves one AIV's Iterate sequence up to that AIV's
MMFUN_END before it takes the other AIV's messages (kernel_kfc.h Run polls the other queue only after a message
whose Process returns true: not a synchronous MMFUN_ITERATE nor MMFUN_GET_TENSOR_C).

IBShare (CFG_IBSHARE_NORM with ``MatmulType(..., ibShare=True)`` (C++: ``MatmulType<..., LayoutMode::NONE, true>``), Matmul高阶API使能IBShare模板共享B矩阵数据.md):
the shared matrix's L1 tile stays in L1 after the first AIV's job, and the second AIV's job with the same GM
address finds it there (no MTE2 copy). With A and B both shared (…共享A和B矩阵数据.md) only ``IterateAll`` is
allowed and the cube computes once for both AIV: the second AIV sends no message at all, only its SERVICE_QUIT
(matmul_client.h: ``Init`` returns on sub-block 1 and ``PostMessage`` "Do not send v1's message to cube"); each
AIV's ``IterateAll`` reports cross-core flag 9 and the server starts the job once both have (matmul_utils.h
``SyncCubeWithVec``: NotifyEvent<PIPE_MTE3>(9) on the AIV, WaitEvent(9) on the AIC); both AIV take its answer.

``SetOrgShape`` is a message of its own on Atlas A2 (MMFUN_SET_ORG_SHAPE: matmul_client.h's non-SSBUF branch, the
one arch 2201 builds, ``USE_WORKSPACE`` in matmul_utils.h); ``SetTail``, ``SetTensorA/B`` and ``SetBias`` only fill
the next message's body.

Not modelled: ``ASCENDC_CUBE_ONLY`` inside a MIX kernel (there the AIV returns at REGIST_MATMUL_OBJ and the AIC
runs the Matmul itself: write that as a kernel launched with ``core="AIC"``), the asynchronous forms
(``Iterate<false>``, ``IterateAll<false>`` with WaitIterateAll), C to the AIV's UB, enableMixDualMaster, and a
message's own GM traffic (the queues are not GM buffers here: ``GetSysWorkSpacePtr()`` is None).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

from ascend_sim.api.highlevel.matmul import ATOMIC_MODES, Matmul
from ascend_sim.api.pipe import TPipe
from ascend_sim.engine import gmcheck
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import ArgumentError, kernel_point, resolve_site
from ascend_sim.engine.instr import PIPE_INDEX
from ascend_sim.engine.scheduler import KernelReturn

_S, _FIX = PIPE_INDEX["S"], PIPE_INDEX["FIX"]
MIX_NUM = 2                     # AIV per AIC in a MIX 1:2 kernel: the server's message queues

INIT, ITERATE, GET_C, ITERATE_ALL, END, ORG_SHAPE = ("MMFUN_INIT", "MMFUN_ITERATE", "MMFUN_GET_TENSOR_C",
                                                     "MMFUN_ITERATE_ALL", "MMFUN_END", "MMFUN_SET_ORG_SHAPE")
AB_SYNC_FLAG = 9                # matmul_utils.h SyncCubeWithVec: the event both AIV report before an A+B shared job


@dataclass
class KfcMsg:
    """One message in an AIV's queue: the function, which registered object, its body and when it is there."""

    fun: str
    inst: int
    body: dict
    time: float             # the cycle the message is in GM for the server
    seen: dict              # the client's GM writes before it (engine/gmcheck.py happens-before)


class _Group:
    """The message queues of one AI Core (an AIC and its two AIV) and the server's answers."""

    def __init__(self):
        self.queues: list[list[KfcMsg]] = [[] for _ in range(MIX_NUM)]
        self.answers: list[list[tuple]] = [[] for _ in range(MIX_NUM)]      # (cycle, GM happens-before)
        self.ab_jobs: list[list[tuple]] = [[] for _ in range(MIX_NUM)]    # each AIV's A+B shared IterateAll (C, A, B)


_GROUPS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()      # launch -> {group: _Group}


def _group(core) -> _Group:
    groups = _GROUPS.setdefault(core.launch, {})
    g = groups.get(core.group)
    if g is None:
        g = groups[core.group] = _Group()
    return g


def REGIST_MATMUL_OBJ(tpipe: TPipe, workspace, *objs_and_tilings) -> None:
    """``REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling[, mm2, &tiling2 ...])``.

    Pure Cube (a kernel on the AIC, or a coupled AI Core): Init each Matmul. MIX kernel on a separated chip: on the
    AIC, run the KFC server until both AIV end, then return from the kernel; on each AIV, make each object a
    client of that server and post its MMFUN_INIT.
    """
    if not objs_and_tilings or len(objs_and_tilings) % 2:
        raise ArgumentError(f"REGIST_MATMUL_OBJ takes Matmul objects and their TCubeTiling in pairs, got "
                            f"{len(objs_and_tilings)} argument(s) after the workspace",
                            fix="REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, tiling)")
    pairs = list(zip(objs_and_tilings[0::2], objs_and_tilings[1::2]))
    for mm, _ in pairs:
        if not isinstance(mm, Matmul):
            raise ArgumentError(f"REGIST_MATMUL_OBJ: {type(mm).__name__} is not a Matmul object",
                                fix="pass the Matmul object, then its TCubeTiling")
    core = current_core()
    mix = core.launch.kernel.core == "MIX" and core.launch.chip.separated
    if not mix or core.core_type not in ("AIC", "AIV"):
        for mm, tiling in pairs:
            mm.Init(tiling, tpipe)
        return
    if core.core_type == "AIC":
        KfcServer(core, tpipe, [mm for mm, _ in pairs]).run()
        raise KernelReturn()        # the macro's `return`: the rest of the kernel runs on the AIVs
    for inst, (mm, tiling) in enumerate(pairs):
        mm.__class__ = MatmulClient             # Ascend C: Matmul is MatmulClient on the AIV of a MIX kernel
        mm.connect(inst)
        mm.Init(tiling, tpipe)


# ----------------------------------------------------------------------------- the AIV side
class MatmulClient(Matmul):
    """``MatmulClient``: the Matmul object on an AIV of a MIX kernel; each call becomes a KFC message."""

    def connect(self, inst: int) -> None:
        core = current_core()
        self._core, self._inst, self._grp, self._sub = core, inst, _group(core), core.sub_block_idx
        self._job = False

    def Init(self, cubeTiling, tpipe: TPipe | None = None) -> None:
        """Check the tiling here, at the learner's line, and send it to the server (MMFUN_INIT)."""
        self.tiling = self.checked_tiling(cubeTiling)
        _check_full_load(self, cubeTiling)
        self.org = (cubeTiling.M, cubeTiling.N, cubeTiling.Ka)
        self.single = [cubeTiling.singleCoreM, cubeTiling.singleCoreN, cubeTiling.singleCoreK]
        self._reset()
        self._post(INIT, {"tiling": cubeTiling})

    def SetOrgShape(self, orgM: int, orgN: int, orgKa: int, orgKb: int | None = None, orgKc: int | None = None) -> None:
        """MMFUN_SET_ORG_SHAPE: on Atlas A2 a message of its own, not part of the next job's body."""
        Matmul.SetOrgShape(self, orgM, orgN, orgKa, orgKb, orgKc)
        self._post(ORG_SHAPE, {"org": self.org})

    def _job_body(self, **extra) -> dict:
        """What SetTensorA/B, SetBias, SetTail, SetOrgShape and SetQuantScalar put in the message body."""
        return {"a": self._a, "b": self._b, "bias": self._bias, "single": list(self.single), "org": self.org,
                "quant": self._quant_word, **extra}

    def Iterate(self, enPartialSum: bool = False) -> bool:
        """MMFUN_ITERATE for the next C block (the first one carries the inputs); False, with no message, when
        the client has counted all of this core's blocks (matmul_client.h: ``cntIter_ >= mnIter_``)."""
        self.check_iterate(enPartialSum)
        if all(self.shares()):
            raise ArgumentError("Iterate with IBShare on both A and B: the cube computes once for the two AIV, so "
                                "only IterateAll is allowed (A和B矩阵同时开启IBShare的场景，获取矩阵计算结果时，只支持调用"
                                "IterateAll接口)", fix="call «mm.IterateAll(cGlobal)» instead of Iterate/GetTensorC")
        if self._next >= len(self._blocks):
            return False
        self._post(ITERATE, self._job_body() if self._next == 0 else {})
        self._next += 1
        self._pending = True
        self._job = True
        return True

    def GetTensorC(self, gm, enAtomic: int = 0, enSequentialWrite: bool = False) -> None:
        """MMFUN_GET_TENSOR_C (synchronous): wait until the server's Fixpipe has written the block to GM."""
        self.check_get_c(gm, enAtomic)
        self._pending = None
        self._post(GET_C, {"gm": gm, "enAtomic": enAtomic, "enSequentialWrite": enSequentialWrite})
        self._wait("GetTensorC")

    def IterateAll(self, gm, enAtomic: int = 0, enSequentialWrite: bool = False, waitIterateAll: bool = False,
                   fakeMsg: bool = False) -> None:
        """MMFUN_ITERATE_ALL (synchronous): the whole C of this core, then wait for the server's flag."""
        self._need_init("IterateAll")
        if self._a is None or self._b is None:
            raise ArgumentError("IterateAll before SetTensorA and SetTensorB", fix="set both inputs first")
        if enAtomic not in ATOMIC_MODES:
            raise ArgumentError(f"IterateAll enAtomic {enAtomic!r} is not 0, 1, 2 or 3",
                                fix="0: overwrite C; 1: AtomicAdd (split-K partial sums); 2: AtomicMax; 3: AtomicMin")
        self._post(ITERATE_ALL, self._job_body(gm=gm, enAtomic=enAtomic, enSequentialWrite=enSequentialWrite))
        if all(self.shares()):      # SyncCubeWithVec: NotifyEvent<PIPE_MTE3>(9), mode 2 (the AIC waits for both AIV)
            self._grp.ab_jobs[self._sub].append(tuple((id(g.buf), g.offset) for g in (gm, self._a[0], self._b[0])))
            core = self._core
            core.launch.cross_core_set(core, 2, PIPE_INDEX["MTE3"], AB_SYNC_FLAG, resolve_site(kernel_point()))
        self._wait("IterateAll")
        self._job = True

    def End(self) -> None:
        """MMFUN_END after a job: the server releases what the object holds."""
        if self.tiling is not None and self._job:
            self._post(END, {})
            self._job = False
            self._reset()

    # --- the message queue ------------------------------------------------------------------------
    def _post(self, fun: str, body: dict) -> None:
        """Write one message to this AIV's queue; none on the second AIV of an A+B shared object (matmul_client.h
        PostMessage: "Do not send v1's message to cube")."""
        if self._sub == 1 and all(self.shares()):
            return
        core = self._core
        core.issue(_S, "KfcPostMessage", core.chip.kfc_post_cycles, klass="scalar", site=kernel_point())
        t = max(core.tail[_S], core.scalar_time)
        self._grp.queues[self._sub].append(KfcMsg(fun, self._inst, body, t, gmcheck.publish(core)))
        core.launch.posted()

    def _wait(self, what: str) -> None:
        """Wait for the server's answer (CrossCoreWaitFlag on the client's flag), as the synchronous calls do."""
        core, answers = self._core, self._grp.answers[self._sub]
        site = kernel_point()

        def ready() -> bool:
            return bool(answers)
        ready.what = f"the KFC server's answer to {what} (REGIST_MATMUL_OBJ's loop on the AIC)"
        ready.site = resolve_site(site)
        core.launch.block_wait(ready)
        t, seen = answers.pop(0)
        gmcheck.merge(core, seen)
        core.scalar_time = max(core.scalar_time, t)
        for p in range(len(core.gate)):
            core.gate[p] = max(core.gate[p], t)
        core.issue(_S, "CrossCoreWaitFlag", core.chip.flag_cycles, klass="sync", site=site)


def _check_full_load(mm: Matmul, t) -> None:
    """IBShare's condition (IBShare适用场景): the shared matrix is loaded whole into L1 (在L1 Buffer上全载)."""
    share_a, share_b = mm.shares()
    for shared, name, outer, single, step in ((share_a, "A", "M", t.singleCoreM, t.stepM * t.baseM),
                                              (share_b, "B", "N", t.singleCoreN, t.stepN * t.baseN)):
        tile_k = (t.stepKa if name == "A" else t.stepKb) * t.baseK
        if shared and (step < single or tile_k < t.singleCoreK):
            raise ArgumentError(
                f"IBShare on {name}: the shared {name} must be loaded whole into L1 (在L1 Buffer上全载), but its L1 "
                f"tile is {step} x {tile_k} ({outer} x K) for a singleCore{outer} x singleCoreK of {single} x "
                f"{t.singleCoreK}", fix=f"choose step{outer} x base{outer} >= singleCore{outer} and "
                f"step{'Ka' if name == 'A' else 'Kb'} x baseK >= singleCoreK, or drop IBShare on {name}")


# ----------------------------------------------------------------------------- the AIC side
class MatmulServerImpl(Matmul):
    """The Matmul the server runs on the AIC; with IBShare its shared L1 tiles outlive one AIV's job."""

    def _release_l1(self) -> None:
        share_a, share_b = self.shares()
        if not share_a:
            self._drop(self._l1a, self.qA1)
            self._l1a = None
        if not share_b:
            self._drop(self._l1b, self.qB1)
            self._l1b = None

    def release_shared(self) -> None:
        """Free every L1 tile, shared ones too (the server quits)."""
        Matmul._release_l1(self)

    def start_job(self, body: dict) -> None:
        """Take a client's inputs and shapes for a new job; a shared tile stays if it holds the same data."""
        self._release_l1()
        held = {"_l1a": self._l1a, "_l1b": self._l1b}
        before = {"_l1a": self._shared_key(self._a), "_l1b": self._shared_key(self._b, True)}
        self._a, self._b, self._bias = body["a"], body["b"], body["bias"]
        self.single, self.org, self._quant_word = list(body["single"]), body["org"], body["quant"]
        self._reset()
        after = {"_l1a": self._shared_key(self._a), "_l1b": self._shared_key(self._b, True)}
        for slot, queue in (("_l1a", self.qA1), ("_l1b", self.qB1)):
            if held[slot] is not None and before[slot] == after[slot]:
                setattr(self, slot, held[slot])
            else:
                self._drop(held[slot], queue)

    def _shared_key(self, operand, is_b: bool = False):
        """What a shared L1 tile of A (or B) depends on: its GM buffer, offset and form, and the shapes."""
        if operand is None:
            return None
        gm, trans = operand
        return (id(gm.buf), gm.offset, trans, self.org, tuple(self.single) if not is_b else
                (self.single[1], self.single[2]))


class KfcServer:
    """``KfcServer``: the AIC's loop over the messages of its two AIV (REGIST_MATMUL_OBJ on the AIC)."""

    def __init__(self, core, tpipe: TPipe, objs: list[Matmul]):
        self.core, self.pipe = core, tpipe
        for mm in objs:
            mm.__class__ = MatmulServerImpl
        self.impls = objs
        self.grp = _group(core)
        launch = core.launch
        self.clients = [b for b in launch.blocks if b.core.group == core.group and b.core.core_type == "AIV"]
        self.quit = [False] * len(self.clients)
        self.owner: int | None = None           # the AIV whose Iterate sequence holds the objects
        self.locked_by: int | None = None       # the AIV whose queue the server polls alone (an Iterate sequence)
        self.ab_served = 0                      # A+B shared jobs started (each waited for both AIV's IterateAll)

    def run(self) -> None:
        while True:
            sub, msg = self._next()
            if sub is None:
                break
            core = self.core
            t = msg.time if msg is not None else self.clients[sub].core.end_time()
            core.scalar_time = max(core.scalar_time, t)
            core.issue(_S, "KfcServer", core.chip.kfc_serve_cycles, klass="scalar", site=kernel_point())
            if msg is None:
                self.quit[sub] = True               # SERVICE_QUIT from the client's destructor
                if self.owner == sub:
                    self.owner = None
                continue
            gmcheck.merge(core, msg.seen)
            self._serve(sub, msg)
        for impl in self.impls:
            if impl.tiling is not None:
                impl.release_shared()

    def _next(self) -> tuple:
        """(AIV, message) to serve next, in the order the messages reached GM (a quit: message None); (None, None)
        when both AIV have quit. Waits until no AIV that might still post an earlier message is running."""
        queues = self.grp.queues
        launch = self.core.launch
        subs = [self.locked_by] if self._locked() else range(len(self.clients))

        def settled(i: int) -> bool:
            b = self.clients[i]
            return bool(queues[i]) or b.done or (b.started and b.waiting_for is not None)

        def first() -> tuple:
            best = (None, None, 0.0)
            for i in subs:
                if queues[i]:
                    t, msg = queues[i][0].time, queues[i][0]
                elif self.clients[i].done and not self.quit[i]:
                    t, msg = self.clients[i].core.end_time(), None
                else:
                    continue
                if best[0] is None or t < best[2]:
                    best = (i, msg, t)
            return best

        def ready() -> bool:
            return all(settled(i) for i in subs) and (first()[0] is not None or all(self.quit))
        ready.what = "KFC messages from its AIV (the server loop of REGIST_MATMUL_OBJ)"
        ready.site = resolve_site(kernel_point())
        launch.block_wait(ready)
        sub, msg, _ = first()
        if msg is not None:
            queues[sub].pop(0)
        return sub, msg

    def _locked(self) -> bool:
        """An AIV's Iterate sequence holds the server until its MMFUN_END (or its quit): kernel_kfc.h Run polls
        the other queue only after a message whose Process returns true, and MMFUN_ITERATE (synchronous) and
        MMFUN_GET_TENSOR_C return false (matmul_server_impl_c220.h StartIterate, GetTensorC), MMFUN_END true."""
        return self.locked_by is not None and not self.quit[self.locked_by]

    def _serve(self, sub: int, msg: KfcMsg) -> None:
        core, impl = self.core, self.impls[msg.inst]
        body = msg.body
        if msg.fun == INIT:
            self._init(impl, body["tiling"])
        elif msg.fun == ITERATE:
            if body:
                impl.start_job(body)
                self.owner = sub
            impl.Iterate()
            self.locked_by = sub
        elif msg.fun == GET_C:
            impl.GetTensorC(body["gm"], body["enAtomic"], body["enSequentialWrite"])
            self._answer(sub)
        elif msg.fun == ITERATE_ALL:
            both = all(impl.shares())
            if both:                # SyncCubeWithVec: WaitEvent(9) until both AIV have reached IterateAll
                self._both_aiv_called()
                core.launch.cross_core_wait(core, AB_SYNC_FLAG, resolve_site(kernel_point()))
            impl.start_job(body)
            self.owner = sub
            while impl.Iterate():
                impl.GetTensorC(body["gm"], body["enAtomic"], body["enSequentialWrite"])
            answer = self._answer(sub)
            if both:                # the one job's flag answers the second AIV too (it sent no message)
                self.grp.answers[1 - sub].append(answer)
        elif msg.fun == ORG_SHAPE:
            impl.org = body["org"]
        elif msg.fun == END:
            if self.locked_by == sub:
                self.locked_by = None
            if self.owner == sub:
                impl._release_l1()          # an IBShare tile stays for the other AIV
                self.owner = None

    def _both_aiv_called(self) -> None:
        """Wait until each AIV has called IterateAll once more (A+B shared); name the hang if one AIV ended first,
        and a second AIV that asked for another job (the AIC computes the first AIV's only)."""
        jobs = self.grp.ab_jobs
        n = self.ab_served = self.ab_served + 1

        def ready() -> bool:
            return all(len(j) >= n or b.done for j, b in zip(jobs, self.clients))
        ready.what = "both AIV's IterateAll on an A and B shared Matmul (SyncCubeWithVec)"
        ready.site = resolve_site(kernel_point())
        self.core.launch.block_wait(ready)
        late = [i for i, j in enumerate(jobs) if len(j) < n]
        if late:
            raise ArgumentError(
                f"IBShare on A and B: AIV {late[0]} ended without calling IterateAll, but the AIC starts the shared "
                "job only when both AIV have (matmul_utils.h SyncCubeWithVec: WaitEvent(9) on the AIC); on the chip "
                "this hangs", fix="call «mm.IterateAll(cGlobal)» on both AIV of the AI Core (the same C), or "
                "drop IBShare on A or on B")
        if len({j[n - 1] for j in jobs}) > 1:
            raise ArgumentError(
                "IBShare on A and B: the two AIV asked for different jobs (another C, A or B GlobalTensor), but only "
                "AIV 0's message reaches the AIC (matmul_client.h PostMessage: \"Do not send v1's message to "
                "cube\"): AIV 1's C would never be written", fix="give both AIV the same A, B and C (IBShare on A "
                "and B is for two AIV that need the same result), or drop IBShare on A or on B")

    def _init(self, impl: MatmulServerImpl, tiling) -> None:
        """MMFUN_INIT: the server copies the client's tiling from GM (matmul_server_impl_c220.h ``Init(msg)``).

        The first one runs Init as the pure-Cube kernel head does (tiling copy + set-up, reserving the buffers);
        a later one copies its tiling again (``matmul_tiling_copy_cycles``) into the object already set up.
        """
        if impl.tiling is None:
            impl.Init(tiling, self.pipe)
            return
        if tiling != impl.tiling:
            raise ArgumentError("REGIST_MATMUL_OBJ: the two AIV of an AI Core registered one Matmul object with "
                                "different tilings; the server keeps one set of L1/L0 buffers per object",
                                fix="give both AIV the same TCubeTiling (SetTail / SetSingleShape for a core's "
                                    "own part)")
        chip = self.core.chip
        self.core.issue(_S, "Matmul.Init", chip.matmul_tiling_copy_cycles, klass="scalar", site=kernel_point())

    def _answer(self, sub: int) -> tuple:
        """The cross-core flag the client waits for, once the Fixpipe has written C."""
        core = self.core
        t = max(core.tail[_FIX], core.scalar_time) + core.chip.cross_core_flag_cycles
        answer = (t, gmcheck.publish(core))
        self.grp.answers[sub].append(answer)
        core.launch.posted()
        return answer


__all__ = ["REGIST_MATMUL_OBJ", "MatmulClient", "MatmulServerImpl", "KfcServer", "KfcMsg"]
