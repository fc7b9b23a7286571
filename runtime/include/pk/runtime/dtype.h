// Element types known to host-side checks.
#pragma once
#include <cstddef>

#include <pk/device/bf16.cuh>

namespace pk {

enum class DType { f32, bf16, f16, i32, u64, f8e4m3, f8e5m2, i8 };

std::size_t dtype_size(DType t);
const char* dtype_name(DType t);

template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::f32; };
template <> struct DTypeOf<bf16> { static constexpr DType value = DType::bf16; };
template <> struct DTypeOf<f16> { static constexpr DType value = DType::f16; };
template <> struct DTypeOf<f8e4m3> { static constexpr DType value = DType::f8e4m3; };
template <> struct DTypeOf<f8e5m2> { static constexpr DType value = DType::f8e5m2; };
template <> struct DTypeOf<int> { static constexpr DType value = DType::i32; };
template <> struct DTypeOf<signed char> { static constexpr DType value = DType::i8; };
template <> struct DTypeOf<unsigned long long> { static constexpr DType value = DType::u64; };
template <class T> constexpr DType dtype_of() { return DTypeOf<T>::value; }

}  // namespace pk
