// Every pk device primitive; what emitted kernels include.
#pragma once
#include <pk/device/launch_context.cuh>
#include <pk/device/bf16.cuh>
#include <pk/device/ptx.cuh>
#include <pk/device/elem.cuh>
#include <pk/device/tensor_map.cuh>
#include <pk/device/mbarrier.cuh>
#include <pk/device/signal.cuh>
#include <pk/device/wait.cuh>
#include <pk/device/check.cuh>
#include <pk/device/barrier.cuh>
#include <pk/device/reduce.cuh>
#include <pk/device/all_reduce.cuh>
#include <pk/device/copy.cuh>
#include <pk/device/push_small.cuh>
#include <pk/device/store.cuh>
#include <pk/device/load.cuh>
