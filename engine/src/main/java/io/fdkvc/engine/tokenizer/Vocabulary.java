package io.fdkvc.engine.tokenizer;

/**
 * A tokenizer's data as a model file stores it (GGUF {@code tokenizer.ggml.*} or llama2.c's
 * tokenizer file), independent of the file format.
 *
 * @param model      "llama" (SentencePiece-style scores, byte fallback) or "gpt2" (byte-level BPE)
 * @param preTokenizer GGUF {@code tokenizer.ggml.pre} ("llama-bpe", "qwen2", "smollm", "default", ...), or null
 * @param tokens     token strings by id
 * @param scores     SentencePiece scores by id (null for gpt2)
 * @param tokenTypes GGUF token types by id (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte), or null
 * @param merges     BPE merges "a b" in priority order (null for llama)
 * @param bos        beginning-of-sequence id, or -1
 * @param eos        end-of-sequence id, or -1
 * @param chatTemplate the Jinja chat template from the metadata, or null
 */
public record Vocabulary(String model, String preTokenizer, String[] tokens, float[] scores, int[] tokenTypes,
                         String[] merges, int bos, int eos, String chatTemplate) {}
