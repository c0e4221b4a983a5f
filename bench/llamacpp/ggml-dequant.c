/*
 * Dequantises blocks with ggml's own decoder, to make the golden values of
 * engine/src/test/resources/ggml-golden (see README.md beside this file).
 *
 * usage: ggml-dequant TYPE_ID IN.blocks OUT.f32
 * IN.blocks holds whole blocks of the ggml type TYPE_ID; OUT.f32 receives the
 * decoded values as little-endian float32, in order.
 *
 * usage: ggml-dequant -q TYPE_ID IN.f32 OUT.blocks
 * quantises float32 values with ggml's reference quantiser (from_float_ref).
 */
#include <stdio.h>
#include <stdlib.h>
#include "ggml.h"

int main(int argc, char **argv) {
    if (argc == 5 && argv[1][0] == '-' && argv[1][1] == 'q') {
        enum ggml_type type = (enum ggml_type) atoi(argv[2]);
        const struct ggml_type_traits *tr = ggml_get_type_traits(type);
        if (tr == NULL || tr->from_float_ref == NULL) { fprintf(stderr, "type %d has no quantiser\n", (int) type); return 1; }
        FILE *in = fopen(argv[3], "rb");
        if (!in) { perror(argv[3]); return 1; }
        fseek(in, 0, SEEK_END);
        long bytes = ftell(in);
        fseek(in, 0, SEEK_SET);
        int64_t n = bytes / 4;
        if (n <= 0 || n % ggml_blck_size(type) != 0) { fprintf(stderr, "%s: not whole blocks\n", argv[3]); return 1; }
        float *x = malloc(bytes);
        if (fread(x, 1, bytes, in) != (size_t) bytes) { perror("read"); return 1; }
        fclose(in);
        size_t qbytes = ggml_row_size(type, n);
        void *q = malloc(qbytes);
        tr->from_float_ref(x, q, n);
        FILE *out = fopen(argv[4], "wb");
        if (!out || fwrite(q, 1, qbytes, out) != qbytes) { perror(argv[4]); return 1; }
        fclose(out);
        printf("%s: %s, %lld values quantised\n", argv[4], ggml_type_name(type), (long long) n);
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: %s TYPE_ID IN.blocks OUT.f32\n", argv[0]);
        return 2;
    }
    enum ggml_type type = (enum ggml_type) atoi(argv[1]);
    const struct ggml_type_traits *tr = ggml_get_type_traits(type);
    if (tr == NULL || tr->to_float == NULL) {
        fprintf(stderr, "type %d has no decoder\n", (int) type);
        return 1;
    }
    FILE *in = fopen(argv[2], "rb");
    if (!in) { perror(argv[2]); return 1; }
    fseek(in, 0, SEEK_END);
    long bytes = ftell(in);
    fseek(in, 0, SEEK_SET);
    size_t block = ggml_type_size(type);
    int64_t per = ggml_blck_size(type);
    if (bytes <= 0 || bytes % (long) block != 0) {
        fprintf(stderr, "%s: %ld bytes is not a whole number of %zu-byte blocks\n", argv[2], bytes, block);
        return 1;
    }
    void *q = malloc(bytes);
    if (fread(q, 1, bytes, in) != (size_t) bytes) { perror("read"); return 1; }
    fclose(in);
    int64_t n = bytes / (long) block * per;
    float *y = malloc(sizeof(float) * n);
    tr->to_float(q, y, n);
    FILE *out = fopen(argv[3], "wb");
    if (!out || fwrite(y, sizeof(float), n, out) != (size_t) n) { perror(argv[3]); return 1; }
    fclose(out);
    printf("%s: %s, %lld values\n", argv[3], ggml_type_name(type), (long long) n);
    return 0;
}
