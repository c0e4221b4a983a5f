// fresh-allocations.c: does a fresh anonymous region read slower in one allocation than in the
// next? Makes ALLOCS regions of 1 GiB in turn (mmap, MAP_POPULATE, then written), each in base
// pages (HUGE 0, MADV_NOHUGEPAGE) or advised for 2 MiB pages (HUGE 1), and prints per region the
// best of three passes of a plain AVX-512 read and of a read with OPS (4 or 8) operations per
// 64 bytes (a shift, a mask, a conversion and an FMA per nibble: the shape of the Q4_K kernel's
// work), one thread; then unmaps it. docs/benchmarks.md, "Two speeds from one JVM to the next".
//   gcc -O2 -march=native bench/decode-experiments/fresh-allocations.c -o /tmp/fresh-allocations
//   /tmp/fresh-allocations 12 0 8
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static __m512 sink;
static double plain(const char*p,size_t n){double t0=now();__m512i a=_mm512_setzero_si512(),b=a,c=a,d=a;
 for(size_t i=0;i<n;i+=256){a=_mm512_add_epi64(a,_mm512_load_si512(p+i));b=_mm512_add_epi64(b,_mm512_load_si512(p+i+64));c=_mm512_add_epi64(c,_mm512_load_si512(p+i+128));d=_mm512_add_epi64(d,_mm512_load_si512(p+i+192));}
 sink=_mm512_add_ps(sink,_mm512_castsi512_ps(_mm512_add_epi64(_mm512_add_epi64(a,b),_mm512_add_epi64(c,d))));return n/(now()-t0)/1e9;}
static double work(const char*p,size_t n,int ops){double t0=now();__m512 a0=_mm512_set1_ps(1),a1=a0,a2=a0,a3=a0,a4=a0,a5=a0,a6=a0,a7=a0;__m512 x=_mm512_set1_ps(0.999f);
 for(size_t i=0;i<n;i+=64){__m512i q=_mm512_load_si512(p+i);
   __m512i m=_mm512_set1_epi32(15);
   a0=_mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(q,m)),x,a0);
   a1=_mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(q,4),m)),x,a1);
   a2=_mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(q,8),m)),x,a2);
   a3=_mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(q,12),m)),x,a3);
   if(ops>4){a4=_mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(q,16),m)),x,a4);
   a5=_mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(q,20),m)),x,a5);
   a6=_mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(q,24),m)),x,a6);
   a7=_mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(q,28)),x,a7);}}
 sink=_mm512_add_ps(sink,_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0,a1),_mm512_add_ps(a2,a3)),_mm512_add_ps(_mm512_add_ps(a4,a5),_mm512_add_ps(a6,a7))));return n/(now()-t0)/1e9;}
int main(int c,char**v){if(c!=4){fprintf(stderr,"usage: fresh-allocations ALLOCS HUGE(0|1) OPS(4|8)\n");return 2;}int allocs=atoi(v[1]);int huge=atoi(v[2]);int ops=atoi(v[3]);size_t n=(size_t)1<<30;
 for(int a=0;a<allocs;a++){char*p=mmap(0,n,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE,-1,0);
  madvise(p,n,huge?MADV_HUGEPAGE:MADV_NOHUGEPAGE);memset(p,1,n);
  double pl=0,wk=0;for(int r=0;r<3;r++){double x=plain(p,n);if(x>pl)pl=x;x=work(p,n,ops);if(x>wk)wk=x;}
  printf("alloc %2d: plain %.1f GB/s, with %d ops/line %.1f GB/s\n",a,pl,ops,wk);fflush(stdout);munmap(p,n);}
 float s[16];_mm512_storeu_ps(s,sink);fprintf(stderr,"%f\n",s[0]);}
