// The whole pk host runtime.
#pragma once
#include <pk/runtime/capabilities.h>
#include <pk/runtime/checks.h>
#include <pk/runtime/compile_cache.h>
#include <pk/runtime/context.h>
#include <pk/runtime/copy_engine.h>
#include <pk/runtime/cuda_check.h>
#include <pk/runtime/driver.h>
#include <pk/runtime/dtype.h>
#include <pk/runtime/embedded_headers.h>
#include <pk/runtime/exchange.h>
#include <pk/runtime/kernel_args.h>
#include <pk/runtime/module.h>
#include <pk/runtime/nvrtc_compile.h>
#include <pk/runtime/profile.h>
#include <pk/runtime/status.h>
#include <pk/runtime/symmetric.h>
