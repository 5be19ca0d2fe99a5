"""The workload facts the vectorised model needs, computed once per workload (``ModelScalars``),
and the literature's model FLOPs per token (for MFU)."""

from __future__ import annotations

from catalog import record

from ._workload import Workload


@record(kw_only=False)
class ModelScalars:
    """Workload facts the vectorised model needs, computed once."""

    L: int
    h: int
    a: int
    a_kv: int
    d: int
    F_act: float  # FFN width a token passes through (k+S experts for MoE)
    m_mat: int
    V: int
    s: int
    E: int
    k: int
    moe_fraction: float  # share of layers that are MoE
    F_e: int
    F_dense: int  # dense FFN width (all layers of a dense model; leading layers of an MoE)
    S: int  # shared experts
    params_total: float
    params_active: float
    params_experts: float
    params_embedding: float
    trainable_fraction: float  # trained parameters / the model's (LoRA: the adapters')
    adapter_fraction: float  # LoRA adapters' parameters / the model's, held beside it; else 0
    attn_params: float
    attn_custom: bool  # attention parameters given (MLA), not implied by heads × head dim
    gbs_seqs: int  # 0: the default rule, resolved per cluster size (``plan_grid``)
    tokens: float
    lora: bool
    optimizer: str
    framework: str
    flash: bool  # a flash kernel (FA2/3, cuDNN, Triton): no s² scores kept, causal blocks skipped
    # keys per query the model's attention reaches (sliding windows, chunks), over full causal's:
    # 1 without them (``Architecture.attention_share``); the model FLOPs count it
    attn_share: float = 1.0
    # what the kernel computes of it: flash skips the blocks outside a window; the 2022 Triton
    # kernel takes none (llm-foundry's triton_flash_attn_fn calls flash_attn_func(q, k, v,
    # bias, causal, softmax_scale): llmfoundry/models/layers/attention.py @00ef82a3), so 1
    attn_share_timed: float = 1.0

    @classmethod
    def of(cls, w: Workload) -> ModelScalars:
        arch = w.arch
        f_act = arch.ffn_hidden
        if arch.is_moe:
            moe_f = (arch.experts_per_token + arch.shared_experts) * arch.expert_ffn
            f_act = ((arch.layers - arch.moe_layers) * arch.ffn_hidden
                     + arch.moe_layers * moe_f) / arch.layers
        trainable, adapters = 1.0, 0.0
        if w.finetune == "lora":
            # rank-r adapters on every linear map: r·(in + out) per matrix. They are parameters
            # of their own, beside the frozen ones: held in memory, computed (``_perf``) and
            # trained — at a high rank more than the model (capped at 1, a rank-4,096 Llama 3
            # 8B trained "100%" of its weights with no adapter memory or FLOPs at all)
            per_layer = w.lora_rank * (4 * arch.hidden + 2 * arch.hidden
                                       + arch.mlp_matrices * (arch.hidden + arch.ffn_hidden))
            trainable = adapters = per_layer * arch.layers / arch.params_total()
        return cls(
            L=arch.layers, h=arch.hidden, a=arch.heads, a_kv=arch.kv_heads, d=arch.d_head,
            F_act=float(f_act), m_mat=arch.mlp_matrices, V=arch.vocab, s=w.seq_len,
            E=arch.experts, k=arch.experts_per_token,
            moe_fraction=arch.moe_layers / arch.layers, F_e=arch.expert_ffn,
            F_dense=arch.ffn_hidden, S=arch.shared_experts,
            params_total=arch.params_total(), params_active=arch.params_active(),
            params_experts=arch.expert_params_total(),
            params_embedding=float(arch.embedding_params()), trainable_fraction=trainable,
            adapter_fraction=adapters,
            attn_params=float(arch.attention_params()),
            attn_custom=bool(arch.attention_params_per_layer),
            gbs_seqs=(w.global_batch_tokens // w.seq_len if w.global_batch_tokens else 0),
            tokens=float(w.tokens), lora=w.finetune == "lora", optimizer=w.optimizer,
            framework=w.framework, flash=w.attention != "unfused",
            attn_share=arch.attention_share(w.seq_len),
            attn_share_timed=arch.attention_share(w.seq_len) if w.attention == "flash" else 1.0)

    # -- FLOPs (the literature's model FLOPs, for MFU) -----------------------------------
    def model_flops_per_token(self) -> float:
        """6·N_matmul + 6·L·s·a·d; LoRA skips weight-grad GEMMs of frozen weights: 4·N_matmul,
        and trains its adapters' N_a in full: + 6·N_a.

        N_matmul excludes the embedding lookup but includes the output head (Narayanan et al.
        2021): the parameters less the embedding tables, plus the head's V·h — with tied
        embeddings the one table is both (subtracting V·h alone dropped the head of GPT-2 and
        Llama 3.2: their MFU read 24% and 17.5% low). The attention term is PaLM's
        12·L·s·a·d (arXiv:2204.02311 App. B) halved for causal masking, as FlashAttention and
        torchtitan count it: a causal model never computes the upper triangle, and counting it
        would let MFU exceed 1 at long context. Sliding windows and chunks shrink it the same
        way, by ``attn_share`` (exactly 1 without them).
        """
        n_matmul = self.params_active - self.params_embedding + self.V * self.h
        attn = 6 * self.L * self.s * self.a * self.d * self.attn_share
        if self.lora:
            return 4.0 * n_matmul + 6.0 * self.adapter_params + attn
        return 6.0 * n_matmul + attn

    @property
    def adapter_params(self) -> float:
        """LoRA adapters' parameters (0 without LoRA)."""
        return self.adapter_fraction * self.params_total
