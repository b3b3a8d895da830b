/*
 * imghist_bench_upload: what a host-to-device copy of descriptor size costs,
 * from pageable and from pinned memory: the GPU's time from an event to the end
 * of a tiny kernel queued behind the copy (the stream busy before, so that the
 * host is ahead), and the host's time in cudaMemcpyAsync. Measured for the
 * batch calls' descriptors (bench/RESULTS.md, 2026-11-26).
 */
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s: %s\n",#x,cudaGetErrorString(e)); exit(1);}}while(0)
__global__ void spin(long long ns){ long long t0=clock64(); while(clock64()-t0<ns){} }
__global__ void tiny(const unsigned* p, unsigned* o){ if(threadIdx.x==0) o[0]=p[0]; }
int main(){
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s,cudaStreamNonBlocking));
  cudaEvent_t e0,e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  size_t maxb=1<<20; void* d; CK(cudaMalloc(&d,maxb)); unsigned* o; CK(cudaMalloc(&o,64));
  std::vector<unsigned char> pg(maxb,1); unsigned char* pn; CK(cudaHostAlloc((void**)&pn,maxb,0));
  for(size_t b: {1024ul, 16384ul, 49152ul, 65536ul, 98304ul, 131072ul, 180224ul, 524288ul}){
    for(int mode=0; mode<3; mode++){ // 0 none, 1 pageable, 2 pinned
      std::vector<double> gpu, host;
      for(int r=0;r<30;r++){
        spin<<<1,1,0,s>>>(200000); // ~100 us busy
        CK(cudaEventRecord(e0,s));
        auto t0=std::chrono::steady_clock::now();
        if(mode==1) CK(cudaMemcpyAsync(d,pg.data(),b,cudaMemcpyHostToDevice,s));
        if(mode==2) CK(cudaMemcpyAsync(d,pn,b,cudaMemcpyHostToDevice,s));
        auto t1=std::chrono::steady_clock::now();
        tiny<<<1,32,0,s>>>((const unsigned*)d,o);
        CK(cudaEventRecord(e1,s)); CK(cudaStreamSynchronize(s));
        float ms; CK(cudaEventElapsedTime(&ms,e0,e1));
        if(r>=5){ gpu.push_back(ms*1000); host.push_back(std::chrono::duration<double,std::micro>(t1-t0).count()); }
      }
      std::sort(gpu.begin(),gpu.end()); std::sort(host.begin(),host.end());
      printf("%7zu B %-8s gpu %7.2f us  host %7.2f us\n", b, mode==0?"none":mode==1?"pageable":"pinned", gpu[gpu.size()/2], host[host.size()/2]);
    }
  }
  // Host also waits? pageable copy while the GPU is busy for 2 ms: host time
  for(size_t b: {65536ul, 180224ul}){
    spin<<<1,1,0,s>>>(4000000);
    auto t0=std::chrono::steady_clock::now();
    CK(cudaMemcpyAsync(d,pg.data(),b,cudaMemcpyHostToDevice,s));
    auto t1=std::chrono::steady_clock::now();
    CK(cudaStreamSynchronize(s));
    printf("pageable %zu B behind a 2 ms kernel: host %.1f us\n", b, std::chrono::duration<double,std::micro>(t1-t0).count());
  }
  return 0;
}
