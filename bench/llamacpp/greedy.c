// Greedy token ids from llama.cpp for a GGUF file and a prompt of token ids (no tokenizer involved).
// usage: greedy FILE N CTX id id id ...   prints the N generated ids, space-separated, one line;
// CTX is the context llama.cpp is created with (it decides, e.g., Phi-3's LongRoPE short or long factors).
// Each id is printed as ID/GAP, GAP the distance from its logit to the runner-up's (how close the choice was).
// The KV cache is F32 (llama.cpp's default F16 would round keys and values the engine keeps in F32).
#include "f32-context.h"
int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: greedy FILE N CTX ids...\n"); return 2; }
    int n = atoi(argv[2]), nctx = atoi(argv[3]), np = argc - 4;
    llama_token *prompt = malloc(sizeof(llama_token) * np);
    for (int i = 0; i < np; i++) prompt[i] = atoi(argv[4 + i]);
    struct llama_model *model;
    struct llama_context *ctx = f32_context(argv[1], nctx, &model);
    int nv = llama_vocab_n_tokens(llama_model_get_vocab(model));
    struct llama_batch b = llama_batch_get_one(prompt, np);
    llama_token tok;
    for (int step = 0; step < n; step++) {
        if (llama_decode(ctx, b)) { fprintf(stderr, "decode failed\n"); return 1; }
        float *lg = llama_get_logits_ith(ctx, -1);
        int best = 0, second = -1;
        for (int i = 1; i < nv; i++) if (lg[i] > lg[best]) best = i;
        for (int i = 0; i < nv; i++) if (i != best && (second < 0 || lg[i] > lg[second])) second = i;
        printf(step ? " %d/%.6f" : "%d/%.6f", best, lg[best] - lg[second]);
        tok = best;
        b = llama_batch_get_one(&tok, 1);
    }
    printf("\n");
    return 0;
}
