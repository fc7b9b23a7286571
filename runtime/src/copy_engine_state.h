// Per-context state of the copy-engine route (copy_engine.cpp): created at its first use,
// destroyed with the context.
#pragma once
#include <memory>

#include <pk/runtime/module.h>
#include <pk/runtime/side_stream.h>

namespace pk {

struct CopyEngineState {
  SideStream side;  // the local part's copy runs there, beside the peers' pulls
  std::unique_ptr<Module> module;  // the one-block sync kernel
  Kernel sync;
};

}  // namespace pk
