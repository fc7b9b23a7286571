// Element type sizes and names.
#include <pk/runtime/dtype.h>

namespace pk {

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::bf16: return 2;
    case DType::f16: return 2;
    case DType::i32: return 4;
    case DType::u64: return 8;
    case DType::f8e4m3: return 1;
    case DType::f8e5m2: return 1;
    case DType::i8: return 1;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
    case DType::i32: return "i32";
    case DType::u64: return "u64";
    case DType::f8e4m3: return "f8e4m3";
    case DType::f8e5m2: return "f8e5m2";
    case DType::i8: return "i8";
  }
  return "?";
}

}  // namespace pk
