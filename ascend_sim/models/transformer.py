"""The parameters of one pre-norm transformer block, shared by the course's ViT and its language model."""
from __future__ import annotations


def block_param_shapes(prefix: str, d_model: int, d_mlp: int) -> dict[str, tuple[int, ...]]:
    """Name -> shape of a block's LayerNorms, fused QKV and output projections and two-layer MLP (torch layout)."""
    return {prefix + "ln1.w": (d_model,), prefix + "ln1.b": (d_model,),
            prefix + "qkv.w": (3 * d_model, d_model), prefix + "qkv.b": (3 * d_model,),
            prefix + "proj.w": (d_model, d_model), prefix + "proj.b": (d_model,),
            prefix + "ln2.w": (d_model,), prefix + "ln2.b": (d_model,),
            prefix + "fc1.w": (d_mlp, d_model), prefix + "fc1.b": (d_mlp,),
            prefix + "fc2.w": (d_model, d_mlp), prefix + "fc2.b": (d_model,)}
