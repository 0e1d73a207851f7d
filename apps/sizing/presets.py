"""Published architectures of real models, for the sizing calculator
(docs/rules/sizing.md#model-presets).

Shapes are copied from each model's config.json on its official Hugging Face card:
num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, and head_dim
(hidden_size ÷ num_attention_heads where config.json has no head_dim). Parameter counts
are the exact sums of the tensor shapes that config implies (embeddings, attention, MLP,
norms, untied LM head), which match the counts on the model cards.
"""

from __future__ import annotations

from apps.sizing.calculator import ModelArchitecture


def _config(repository: str) -> str:
    return f"https://huggingface.co/{repository}/blob/main/config.json"


_ARCHITECTURES = (
    ModelArchitecture(
        key="llama-3.1-8b",
        name="Llama 3.1 8B",
        parameters=8_030_261_248,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=8,
        head_dim=128,
        source=_config("meta-llama/Llama-3.1-8B"),
        max_context_tokens=131_072,
    ),
    ModelArchitecture(
        key="llama-3.1-70b",
        name="Llama 3.1 70B",
        parameters=70_553_706_496,
        layers=80,
        hidden_size=8192,
        attention_heads=64,
        kv_heads=8,
        head_dim=128,
        source=_config("meta-llama/Llama-3.1-70B"),
        max_context_tokens=131_072,
    ),
    ModelArchitecture(
        key="llama-3.1-405b",
        name="Llama 3.1 405B",
        parameters=405_853_388_800,
        layers=126,
        hidden_size=16384,
        attention_heads=128,
        kv_heads=8,
        head_dim=128,
        source=_config("meta-llama/Llama-3.1-405B"),
        max_context_tokens=131_072,
    ),
    ModelArchitecture(
        key="qwen2.5-7b",
        name="Qwen2.5 7B",
        parameters=7_615_616_512,
        layers=28,
        hidden_size=3584,
        attention_heads=28,
        kv_heads=4,
        head_dim=128,
        source=_config("Qwen/Qwen2.5-7B"),
        max_context_tokens=131_072,
    ),
    ModelArchitecture(
        key="qwen2.5-72b",
        name="Qwen2.5 72B",
        parameters=72_706_203_648,
        layers=80,
        hidden_size=8192,
        attention_heads=64,
        kv_heads=8,
        head_dim=128,
        source=_config("Qwen/Qwen2.5-72B"),
        max_context_tokens=131_072,
    ),
    # Eight experts of which two run per token: all 46.7B stay resident, 12.9B are active.
    ModelArchitecture(
        key="mixtral-8x7b",
        name="Mixtral 8x7B",
        parameters=46_702_792_704,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=8,
        head_dim=128,
        source=_config("mistralai/Mixtral-8x7B-v0.1"),
        is_moe=True,
        active_parameters=12_879_925_248,
        max_context_tokens=32_768,
    ),
    # Multi-head attention (one KV head per query head): the textbook 2 × layers × hidden
    # (docs/rules/sizing.md#inference-memory).
    ModelArchitecture(
        key="llama-2-7b",
        name="Llama 2 7B",
        parameters=6_738_415_616,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=32,
        head_dim=128,
        source=_config("meta-llama/Llama-2-7b-hf"),
        max_context_tokens=4096,
    ),
    ModelArchitecture(
        key="llama-2-13b",
        name="Llama 2 13B",
        parameters=13_015_864_320,
        layers=40,
        hidden_size=5120,
        attention_heads=40,
        kv_heads=40,
        head_dim=128,
        source=_config("meta-llama/Llama-2-13b-hf"),
        max_context_tokens=4096,
    ),
)

PRESETS: dict[str, ModelArchitecture] = {preset.key: preset for preset in _ARCHITECTURES}


def preset_choices() -> list[tuple[str, str]]:
    """(key, name) pairs in display order, for a form's choices."""
    return [(preset.key, preset.name) for preset in _ARCHITECTURES]
