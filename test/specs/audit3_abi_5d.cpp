#include <cstdio>
#include <cstddef>
#define __device__
#include "../../runtime/include/pk/device/launch_context.cuh"
int main() {
  printf("SymTensor: shape@%zu numel@%zu (shape[4] would be @%zu)\n", offsetof(pk::SymTensor<float>, shape), offsetof(pk::SymTensor<float>, numel), offsetof(pk::SymTensor<float>, shape) + 4 * sizeof(long long));
  printf("Tensor: shape@%zu numel@%zu (shape[4] would be @%zu)\n", offsetof(pk::Tensor<float>, shape), offsetof(pk::Tensor<float>, numel), offsetof(pk::Tensor<float>, shape) + 4 * sizeof(long long));
  // A [2,3,4,5,6] tensor passed through the JIT as shape {2,3,4,30} (numel 720, which check_launch_args accepts).
  pk::SymTensor<float> x{}; x.shape[0]=2; x.shape[1]=3; x.shape[2]=4; x.shape[3]=30; x.numel=720;
  long long* s = x.shape; long long n = 1; for (int d = 0; d < 5; ++d) n *= s[d];
  printf("device element count of the 5-D collective: %lld (numel %lld)\n", n, x.numel);
}
