// loaded_symbol.h: a symbol of a library the process has loaded already,
// without ever loading it (the CUDA driver, the MPI's libpmix).
#ifndef MLA_LOADED_SYMBOL_H_
#define MLA_LOADED_SYMBOL_H_

namespace mla::lib {

// Returns `symbol` of `library` (a soname such as "libcuda.so.1") when that
// library is mapped in this process already, else null; null too when the
// library lacks the symbol.  Never loads the library: it opens it with
// RTLD_NOLOAD and drops the reference that took before returning, so the
// library stays exactly as loaded as it was (the pointer is valid while
// whoever loaded it keeps it).  Thread-safe.
void* LoadedSymbol(const char* library, const char* symbol);

}  // namespace mla::lib

#endif  // MLA_LOADED_SYMBOL_H_
