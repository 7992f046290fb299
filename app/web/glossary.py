"""Glossary terms shown on /glossary and as <abbr> titles across the pages."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One glossary entry; `key` is its anchor on /glossary."""

    key: str
    term: str
    expansion: str
    definition: str
    why_it_matters: str


TERMS: tuple[Term, ...] = (
    Term(
        "gb",
        "GB",
        "gigabyte, 10⁹ bytes",
        "Every memory figure the engine computes (needed, usable, spare) is in GB = 10⁹ bytes. "
        "Memory capacities as vendors state them are binary: a \"24 GB\" card holds 24 GiB = "
        "25.77 × 10⁹ bytes, an \"80 GB\" H100 80 GiB. The catalog's capacities (a card's "
        "memory, a build's total and pooled memory) are shown as the vendor labels them, marked "
        "\"GB (vendor)\": 96 GB (vendor) for 4 × RTX 4090 is 103 GB of 10⁹ bytes. The engine "
        "converts them to bytes before comparing them with what a model needs.",
        "A model whose weights are 16.06 × 10⁹ bytes fits a \"16 GB\" card (17.18 × 10⁹ "
        "bytes), which reading the label as 16 × 10⁹ bytes would deny.",
    ),
    Term(
        "nvlink",
        "NVLink",
        "NVIDIA's GPU-to-GPU link",
        "A direct, high-bandwidth link between NVIDIA GPUs, several times faster than PCIe "
        "(hundreds of GB/s per GPU on data-centre parts).",
        "GPUs joined by NVLink can split each layer between them (tensor parallelism) without "
        "the link becoming the bottleneck, so their memory behaves like one pool.",
    ),
    Term(
        "nvswitch",
        "NVSwitch",
        "NVIDIA's switch chip for NVLink",
        "A switch that connects every GPU in a node (8 in a DGX/HGX) to every other at full "
        "NVLink bandwidth, instead of point-to-point bridges between pairs.",
        "With NVSwitch all GPUs of a node form one pooled memory domain: a DGX H200 offers "
        "8 × 141 GB to a single model.",
    ),
    Term(
        "pcie",
        "PCIe",
        "PCI Express",
        "The general-purpose expansion bus between a CPU and its cards; consumer GPUs talk to "
        "each other over it (tens of GB/s per card).",
        "Cards that only share PCIe are isolated: a model is split by whole layers (pipeline), "
        "and each card must hold its share on its own.",
    ),
    Term(
        "infiniband",
        "InfiniBand",
        "a low-latency data-centre network",
        "The network most GPU clusters use between nodes: hundreds of Gb/s per link with "
        "RDMA, so one node's GPUs can read another's memory without the CPUs.",
        "It lets several nodes serve one model (usually pipeline stages per node), at a "
        "fraction of the in-node NVLink bandwidth.",
    ),
    Term(
        "kv-cache",
        "KV cache",
        "key/value cache",
        "The attention keys and values a model keeps for every token of every sequence it "
        "is generating, so that each new token does not recompute them.",
        "It grows with context length × concurrent sequences and can exceed the weights at "
        "long contexts; MLA and grouped-query attention make it much smaller.",
    ),
    Term(
        "tensor-parallel",
        "Tensor parallelism",
        "TP",
        "Splitting every layer's matrices across several accelerators, which then exchange "
        "partial results (all-reduce) twice per layer for every token.",
        "It divides the memory read per token, so it speeds up decoding — but only over a fast "
        "link such as NVLink/NVSwitch.",
    ),
    Term(
        "pipeline-parallel",
        "Pipeline parallelism",
        "PP",
        "Splitting the model by whole layers: each accelerator (a stage) holds a contiguous "
        "block of layers and hands activations to the next.",
        "It needs little bandwidth, so it works over PCIe and between nodes, but one sequence "
        "visits the stages one after another: it adds capacity, not single-stream speed.",
    ),
    Term(
        "moe",
        "Mixture of experts",
        "MoE",
        "A model whose feed-forward layers hold many expert networks of which only a few run "
        "for each token (DeepSeek-V3: 8 of 256 routed experts).",
        "All experts must be in memory, but only the active parameters are read per token, so "
        "MoE models decode much faster than their total size suggests.",
    ),
    Term(
        "mla",
        "Multi-head latent attention",
        "MLA",
        "DeepSeek's attention that caches one compressed latent vector per token and layer "
        "instead of keys and values for every head.",
        "Its KV cache is several times smaller than grouped-query attention at the same size.",
    ),
    Term(
        "gqa",
        "Grouped-query attention",
        "GQA",
        "Attention in which several query heads share one key/value head (Llama 3: 8 KV heads).",
        "The KV cache shrinks by the number of query heads per KV head.",
    ),
    Term(
        "decode",
        "Decode",
        "token generation",
        "Producing output tokens one at a time; each step reads all active weights and the "
        "KV cache from memory.",
        "Decode speed is usually limited by memory bandwidth, not compute.",
    ),
    Term(
        "prefill",
        "Prefill",
        "prompt processing",
        "Processing the whole prompt at once before the first output token.",
        "It is compute-bound and sets the time to first token.",
    ),
    Term(
        "quantization",
        "Quantization",
        "precision",
        "Storing weights with fewer bits: FP8 and INT8 take 1 byte per parameter, INT4/FP4 and "
        "GGUF Q4 about half a byte, against 2 bytes at BF16.",
        "Halving the bits halves the memory and roughly doubles bandwidth-bound decode speed, "
        "at some cost in quality.",
    ),
    Term(
        "pareto-front",
        "Pareto front",
        "cost/speed frontier",
        "The builds that no other build beats on both price and speed at once.",
        "Any build off the front is dominated: another is both cheaper and faster.",
    ),
)

TERMS_BY_KEY = {t.key: t for t in TERMS}
