// Attributes of the pk dialect: the decisions passes take and the kinds ops carry.
#ifndef PK_ATTRS_TD
#define PK_ATTRS_TD

include "pk/Dialect/PkBase.td"

class Pk_I32Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::pk";
  let genSpecializedAttr = 0;
}

class Pk_EnumAttr<EnumAttrInfo info, string mnemonic>
    : EnumAttr<Pk_Dialect, info, mnemonic> {
  let assemblyFormat = "`<` $value `>`";
}

def Pk_TransportEnum : Pk_I32Enum<"Transport", "how bytes move between GPUs", [
    I32EnumAttrCase<"automatic", 0, "auto">,
    I32EnumAttrCase<"ldst", 1>,
    I32EnumAttrCase<"tma", 2>,
    I32EnumAttrCase<"copy_engine", 3>,
    I32EnumAttrCase<"multimem", 4>]>;
def Pk_TransportAttr : Pk_EnumAttr<Pk_TransportEnum, "transport">;

def Pk_OverlapEnum : Pk_I32Enum<"Overlap", "how communication overlaps compute", [
    I32EnumAttrCase<"automatic", 0, "auto">,
    I32EnumAttrCase<"intra_sm", 1>,
    I32EnumAttrCase<"inter_sm", 2>]>;
def Pk_OverlapAttr : Pk_EnumAttr<Pk_OverlapEnum, "overlap">;

def Pk_ReduceKindEnum : Pk_I32Enum<"ReduceKind", "a reduction", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>]>;
def Pk_ReduceKindAttr : Pk_EnumAttr<Pk_ReduceKindEnum, "reduce">;

def Pk_CollectiveKindEnum : Pk_I32Enum<"CollectiveKind", "a whole-tensor collective", [
    I32EnumAttrCase<"all_reduce", 0>,
    I32EnumAttrCase<"all_gather", 1>,
    I32EnumAttrCase<"reduce_scatter", 2>,
    I32EnumAttrCase<"all_to_all", 3>,
    I32EnumAttrCase<"broadcast", 4>,
    I32EnumAttrCase<"reduce", 5>,
    I32EnumAttrCase<"gather", 6>,
    I32EnumAttrCase<"scatter", 7>]>;
def Pk_CollectiveKindAttr : Pk_EnumAttr<Pk_CollectiveKindEnum, "collective">;

def Pk_AlgorithmEnum : Pk_I32Enum<"Algorithm", "a collective algorithm", [
    I32EnumAttrCase<"automatic", 0, "auto">,
    I32EnumAttrCase<"one_shot", 1>,
    I32EnumAttrCase<"two_shot", 2>]>;
def Pk_AlgorithmAttr : Pk_EnumAttr<Pk_AlgorithmEnum, "algorithm">;

def Pk_RoleEnum : Pk_I32Enum<"Role", "a worker role inside a kernel", [
    I32EnumAttrCase<"loader", 0>,
    I32EnumAttrCase<"consumer", 1>,
    I32EnumAttrCase<"storer", 2>,
    I32EnumAttrCase<"communicator", 3>]>;
def Pk_RoleAttr : Pk_EnumAttr<Pk_RoleEnum, "role">;

def Pk_MapKindEnum : Pk_I32Enum<"MapKind", "an element-wise operation", [
    I32EnumAttrCase<"add", 0>,
    I32EnumAttrCase<"sub", 1>,
    I32EnumAttrCase<"mul", 2>,
    I32EnumAttrCase<"div", 3>,
    I32EnumAttrCase<"max", 4>,
    I32EnumAttrCase<"min", 5>,
    I32EnumAttrCase<"exp", 6>,
    I32EnumAttrCase<"neg", 7>,
    I32EnumAttrCase<"sqrt", 8>,
    I32EnumAttrCase<"rsqrt", 9>,
    I32EnumAttrCase<"log", 10>,
    I32EnumAttrCase<"tanh", 11>,
    I32EnumAttrCase<"sigmoid", 12>,
    I32EnumAttrCase<"silu", 13>,
    I32EnumAttrCase<"gelu_tanh", 14>,
    I32EnumAttrCase<"gelu_erf", 15>,
    I32EnumAttrCase<"sin", 16>,
    I32EnumAttrCase<"cos", 17>,
    I32EnumAttrCase<"abs", 18>,
    I32EnumAttrCase<"pow", 19>,
    // Comparisons: 1 where true, 0 where false (masks for pk.tile.select).
    I32EnumAttrCase<"lt", 20>,
    I32EnumAttrCase<"le", 21>,
    I32EnumAttrCase<"gt", 22>,
    I32EnumAttrCase<"ge", 23>,
    I32EnumAttrCase<"eq", 24>,
    I32EnumAttrCase<"ne", 25>,
    // Integer remainder (C's %, the sign of the dividend; x % 0 gives 0).
    I32EnumAttrCase<"rem", 26>,
    // The error function (erff), for GELU's exact form and its backward pass.
    I32EnumAttrCase<"erf", 27>,
    // Integer tiles: x and y mixed by a hash (pk::tile::wrap_hash), a value in [0, 2^31); the
    // random numbers of uniform() chain it over a seed and an element's coordinates.
    I32EnumAttrCase<"hash", 28>,
    // Integer tiles: bitwise and, or, xor; shifts by 0 .. bits - 1 (left: zeros in, right:
    // arithmetic, the sign copied in); a count outside that range gives 0 (left) or the sign
    // fill (right), never C++'s undefined behaviour (pk/tile/int_math.cuh).
    I32EnumAttrCase<"bit_and", 29>,
    I32EnumAttrCase<"bit_or", 30>,
    I32EnumAttrCase<"bit_xor", 31>,
    I32EnumAttrCase<"shl", 32>,
    I32EnumAttrCase<"shr", 33>,
    // Float tiles: to a whole number, half-way cases to even (rintf, torch.round), down, up.
    I32EnumAttrCase<"round", 34>,
    I32EnumAttrCase<"floor", 35>,
    I32EnumAttrCase<"ceil", 36>]>;
def Pk_MapKindAttr : Pk_EnumAttr<Pk_MapKindEnum, "map">;

def Pk_MemorySpaceEnum : Pk_I32Enum<"MemorySpace", "where a tile lives", [
    I32EnumAttrCase<"reg", 0>,
    I32EnumAttrCase<"smem", 1>]>;

def Pk_CompareEnum : Pk_I32Enum<"Compare", "how a wait compares its flag", [
    I32EnumAttrCase<"ge", 0>,
    I32EnumAttrCase<"eq", 1>]>;
def Pk_CompareAttr : Pk_EnumAttr<Pk_CompareEnum, "compare">;

def Pk_FlagScopeEnum : Pk_I32Enum<"FlagScope", "who shares a flag slot", [
    I32EnumAttrCase<"block", 0>,
    I32EnumAttrCase<"grid", 1>]>;
def Pk_FlagScopeAttr : Pk_EnumAttr<Pk_FlagScopeEnum, "scope">;

#endif // PK_ATTRS_TD
