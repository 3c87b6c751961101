"""Small models built from a config with random weights, nothing downloaded: the dry run of the GPU
recipe (same architecture as Qwen2-VL, a few thousand parameters) and tests.

The tokenizer is a byte-level BPE trained on the planner's own prompt vocabulary, so the chat
template, the image tokens and the processor behave as a real checkpoint's do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from homiebot.core.prompting import FORMATS, PromptBuilder

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MODELS = [("NoMaD", "image-goal navigation"), ("PixNav", "pixel-goal navigation"), ("octo", "manipulation"), ("RT-1-X", "manipulation")]
IMAGE = 56  # pixels a side: a 4x4 grid of 14-pixel patches, 4 image tokens per view after the 2x2 merge


def _tokenizer(corpus: list[str]) -> Any:
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=800, special_tokens=SPECIAL, show_progress=False,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_tiny_qwen2_vl(path: str | Path, corpus: list[str] | None = None, seed: int = 0) -> Path:
    """Write a randomly initialised Qwen2-VL checkpoint folder (config, weights, tokenizer, PIL image processor)."""
    import torch
    import transformers
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    path = Path(path)
    prompts = PromptBuilder(MODELS, "json")
    text = [prompts.system(), PromptBuilder(MODELS, "text").system(), prompts.user("put the green can in the fridge", [], [], None),
            *FORMATS.values(), 'Analysis: Subtask: [Go to, fridge] [Put, green_can, fridge] Model: None End {"analysis": "subtask": '
            '["Go to", "kitchen"], "model": null}', *(corpus or [])]
    tokenizer = _tokenizer(text)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL}
    config = transformers.Qwen2VLConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 8192,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
                     "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"]},
        vision_config={"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2, "patch_size": 14,
                       "spatial_merge_size": 2, "temporal_patch_size": 2},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(seed)
    transformers.Qwen2VLForConditionalGeneration(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    Qwen2VLImageProcessorPil(min_pixels=IMAGE * IMAGE, max_pixels=IMAGE * IMAGE).save_pretrained(path)
    return path


def build_tiny_causal_lm(path: str | Path, corpus: list[str] | None = None, seed: int = 0) -> Path:
    """Write a randomly initialised text-only Llama checkpoint folder (config, weights, tokenizer with a chat
    template): the architecture of SmolLM2, a few thousand parameters, for dry runs of the text recipe."""
    import torch
    import transformers

    path = Path(path)
    prompts = PromptBuilder(MODELS, "json", vision=False)
    text = [prompts.system(), prompts.user("put the green can in the fridge", [], [], None, views="front: fridge (2.0 m, kitchen)"),
            *FORMATS.values(), '{"analysis": "subtask": ["Go to", "kitchen"], "model": null} End', *(corpus or [])]
    tokenizer = _tokenizer(text)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL}
    config = transformers.LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=8192,
                                      bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
                                      tie_word_embeddings=True)
    torch.manual_seed(seed)
    transformers.LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
