// An opaque TMA descriptor with CUtensorMap's size and alignment, so device code needs no cuda.h.
#pragma once

namespace pk {

// Bit-for-bit a CUtensorMap (128 bytes, 128-byte aligned as in CUDA 13); the host encodes it with
// cuTensorMapEncodeTiled. Pass it as a `const __grid_constant__ TensorMap` kernel parameter
// (or keep it in global memory) and hand its address to the *_tensor_2d functions.
struct alignas(128) TensorMap {
  unsigned long long opaque[16];
};

}  // namespace pk
