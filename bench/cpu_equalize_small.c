/*
 * imghist_histogram and imghist_equalize of one 64 x 64 16-bit image on the
 * CPU backend, 200 calls, three times: the fixed cost of a call. Not built by
 * meson; from the repository root after a build in build-cpu:
 *   gcc -O2 -Ibuild-cpu/include -Iinclude bench/cpu_equalize_small.c \
 *       -Lbuild-cpu/src -limghist -Wl,-rpath,build-cpu/src -o /tmp/t16 && /tmp/t16
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <stdint.h>
#include "imghist.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  imghist_ctx *ctx; imghist_create(IMGHIST_BACKEND_CPU,-1,&ctx);
  uint16_t *img=malloc(64*64*2); for(int i=0;i<4096;i++) img[i]=(uint16_t)(rand()*7);
  uint64_t *h=malloc(65536*8);
  imghist_view v={img,IMGHIST_U16,IMGHIST_MEM_HOST,64,64,128,1,0,0,NULL};
  imghist_counts c={h,65536,IMGHIST_MEM_HOST};
  for(int k=0;k<3;k++){ double t=now(); for(int i=0;i<200;i++) imghist_histogram(ctx,&v,NULL,&c); printf("hist: %.1f us\n",(now()-t)/200*1e6);}
  uint16_t *d=malloc(64*64*2); imghist_view dv=v; dv.data=d;
  for(int k=0;k<3;k++){ double t=now(); for(int i=0;i<200;i++) imghist_equalize(ctx,&v,&dv,IMGHIST_EQ_OPENCV,NULL); printf("eq: %.1f us\n",(now()-t)/200*1e6);}
  return 0;}
