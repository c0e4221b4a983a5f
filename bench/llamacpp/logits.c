// llama.cpp's logits at every step of a fixed token sequence (teacher-forced, no sampling), to compare
// with the engine's position by position. usage: logits FILE CTX NPROMPT id id id ...
// The first NPROMPT ids are decoded as one batch, then the rest one at a time; after the prompt and after
// each later id one line is printed: the step, then every logit (%.6f). KV cache F32, one thread, as greedy.c.
#include "llama.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: logits FILE CTX NPROMPT ids...\n"); return 2; }
    int nctx = atoi(argv[2]), np = atoi(argv[3]), n = argc - 4;
    if (np < 1 || np > n) { fprintf(stderr, "NPROMPT must be 1..%d\n", n); return 2; }
    llama_token *ids = malloc(sizeof(llama_token) * n);
    for (int i = 0; i < n; i++) ids[i] = atoi(argv[4 + i]);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    struct llama_model *model = llama_model_load_from_file(argv[1], mp);
    if (!model) { fprintf(stderr, "load failed\n"); return 1; }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = nctx; cp.n_batch = nctx; cp.type_k = GGML_TYPE_F32; cp.type_v = GGML_TYPE_F32; cp.n_threads = 1; cp.n_threads_batch = 1;
    struct llama_context *ctx = llama_init_from_model(model, cp);
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
