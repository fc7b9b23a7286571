// Walks the AST of PK_KERNEL functions into the plain-data model.
#pragma once

#include "SpecParser.h"

namespace clang {
class ASTContext;
}

namespace pk::fe {

/// Lowers every PK_KERNEL function of the translation unit, or only those named
/// `onlyKernel` when there are any. `builtinPrefix` is the directory the embedded spec header
/// is served from: only functions declared there are spec-language builtins.
void walkKernels(clang::ASTContext &context, const std::string &builtinPrefix,
                 const std::string &onlyKernel, ParseResult &result);

} // namespace pk::fe
