"""Faults and recovery (故障恢复): a rank dies mid-step, every rank restarts from the last checkpoint.

This is torchrun's elastic model: a failed worker is a membership change, so *all* workers restart
(``--max-restarts``) and reload the last snapshot: model, optimizer, step, sampler epoch and RNG.
No state is lost; the steps since the snapshot are redone. Because the simulated run is deterministic,
the recovered run ends with weights bit-identical to an uninterrupted one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.loop import Trainer


class RankFailed(HcclError):
    """A device of the simulated cluster stopped in the middle of a step."""


def kill(rank: int, step: int, world: int) -> None:
    """Rank ``rank`` dies after its backward, before the gradient AllReduce of ``step``."""
    others = [r for r in range(world) if r != rank]
    raise RankFailed(f"rank {rank} died in step {step}, after backward and before the gradient AllReduce; "
                     f"ranks {others} wait in that AllReduce until HCCL_EXEC_TIMEOUT (1800 s by default) "
                     "and then fail too", fix="restart every rank from the last checkpoint (torchrun "
                     "--max-restarts N does it), then go on from the checkpoint's step")


@dataclass
class RecoveryLog:
    """What happened: checkpoints taken, failures, and the steps that had to be redone."""

    checkpoints: list[int] = field(default_factory=list)
    failures: list[tuple[int, int, int]] = field(default_factory=list)     # (step, rank, restored step)
    messages: list[str] = field(default_factory=list)
    wall_us: float = 0.0      # simulated: every incarnation's timeline, plus a timeout and a restart per failure

    @property
    def redone_steps(self) -> int:
        return sum(step - restored for step, _, restored in self.failures)


def run_with_recovery(make_trainer: Callable[[], Trainer], total_steps: int, checkpoint_every: int,
                      failures: dict[int, int] | None = None, max_restarts: int = 3,
                      exec_timeout_s: float = 1800.0, restart_s: float = 60.0) -> tuple[Trainer, RecoveryLog]:
    """Train ``total_steps`` steps, snapshotting every ``checkpoint_every``; ``failures`` maps step -> dying rank.

    ``make_trainer`` builds fresh processes (new replicas, optimizer, samplers, RNGs) as a restart does. A failure
    costs the survivors ``exec_timeout_s`` (HCCL_EXEC_TIMEOUT) and everyone ``restart_s``; checkpoints are free here.
    """
    if checkpoint_every < 1:
        raise HcclError(f"checkpoint_every={checkpoint_every!r}: a checkpoint interval is at least one step",
                        fix="pass checkpoint_every as a positive number of steps")
    pending, log = dict(failures or {}), RecoveryLog()
    trainer = make_trainer()
    snapshot = trainer.state_dict()
    log.checkpoints.append(0)
    while trainer.step < total_steps:
        step = trainer.step
        if step in pending:
            rank = pending.pop(step)
            world = len(trainer.ddp.replicas)
            try:
                trainer.train_step(before_allreduce=lambda: kill(rank, step, world))
            except RankFailed as e:
                if len(log.failures) >= max_restarts:
                    raise
                log.failures.append((step, rank, snapshot["step"]))
                log.messages.append(e.rule_message)
                log.wall_us += max(trainer.ddp.comm.timeline.clock_us) + (exec_timeout_s + restart_s) * 1e6
                trainer = make_trainer()
                trainer.load_state_dict(snapshot)
            continue
        trainer.train_step()
        if trainer.step % checkpoint_every == 0:
            snapshot = trainer.state_dict()
            log.checkpoints.append(trainer.step)
    log.wall_us += max(trainer.ddp.comm.timeline.clock_us)
    return trainer, log
