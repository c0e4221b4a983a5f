// What greedy.c and logits.c share: load FILE with libllama and create a context of NCTX tokens with an
// F32 KV cache (llama.cpp's default F16 would round keys and values the engine keeps in F32) and one
// thread. Exits 1 with a line on stderr when the file does not load.
#include "llama.h"
#include <stdio.h>
#include <stdlib.h>
static struct llama_context *f32_context(const char *file, int nctx, struct llama_model **model) {
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    *model = llama_model_load_from_file(file, mp);
    if (!*model) { fprintf(stderr, "load failed\n"); exit(1); }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = nctx; cp.n_batch = nctx; cp.type_k = GGML_TYPE_F32; cp.type_v = GGML_TYPE_F32; cp.n_threads = 1; cp.n_threads_batch = 1;
    return llama_init_from_model(*model, cp);
}
