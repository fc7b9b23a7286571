// Dialect verifier messages in the words of a C++ spec: the construct's name instead of the
// op's ('pk.tile.store' op ... -> store: ...), spec.h types instead of IR types.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace pk::fe {

// `message` with a leading "'<op>' op " replaced by the spec construct that made the op, and
// IR types (!pk.tile<16x64xf32>, !pk.sym<?x?xbf16>, f8E4M3FN) spelled as in pk/spec.h.
std::string specWords(llvm::StringRef message);

} // namespace pk::fe
