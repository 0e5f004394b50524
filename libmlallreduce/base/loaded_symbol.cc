// loaded_symbol.cc: LoadedSymbol (loaded_symbol.h).
#include "libmlallreduce/base/loaded_symbol.h"

#include <dlfcn.h>

namespace mla::lib {

void* LoadedSymbol(const char* library, const char* symbol) {
  void* lib = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return nullptr;
  void* found = dlsym(lib, symbol);
  dlclose(lib);  // drops only the reference RTLD_NOLOAD took
  return found;
}

}  // namespace mla::lib
