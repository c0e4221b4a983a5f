// llama.cpp's logits at every step of a fixed token sequence (teacher-forced, no sampling), to compare
// with the engine's position by position. usage: logits FILE CTX NPROMPT id id id ...
// The first NPROMPT ids are decoded as one batch, then the rest one at a time; after the prompt and after
// each later id one line is printed: the step, then every logit (%.6f). KV cache F32, one thread, as greedy.c.
#include "f32-context.h"
int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: logits FILE CTX NPROMPT ids...\n"); return 2; }
    int nctx = atoi(argv[2]), np = atoi(argv[3]), n = argc - 4;
    if (np < 1 || np > n) { fprintf(stderr, "NPROMPT must be 1..%d\n", n); return 2; }
    llama_token *ids = malloc(sizeof(llama_token) * n);
    for (int i = 0; i < n; i++) ids[i] = atoi(argv[4 + i]);
    struct llama_model *model;
    struct llama_context *ctx = f32_context(argv[1], nctx, &model);
    int nv = llama_vocab_n_tokens(llama_model_get_vocab(model));
    struct llama_batch b = llama_batch_get_one(ids, np);
    for (int step = 0; np + step <= n; step++) {
        if (llama_decode(ctx, b)) { fprintf(stderr, "decode failed\n"); return 1; }
        float *lg = llama_get_logits_ith(ctx, -1);
        printf("%d", step);
        for (int i = 0; i < nv; i++) printf(" %.6f", lg[i]);
        printf("\n");
        if (np + step == n) break;
        b = llama_batch_get_one(&ids[np + step], 1);
    }
    return 0;
}
