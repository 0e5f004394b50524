// c_api_names.cc: the C API's name functions (mlallreduce_types.h), which
// the library exports; the names themselves are the vocabulary's
// (vocab/algo_names.h).
#include "mlallreduce_types.h"
#include "vocab/algo_names.h"

extern "C" {

const char* mla_algo_name(mla_algo algo) { return mla::AlgoName(algo); }

int mla_algo_from_name(const char* name, mla_algo* algo) { return mla::AlgoFromName(name, algo) ? 1 : 0; }

const char* mla_transport_name(mla_transport transport) { return mla::TransportName(transport); }

int mla_transport_from_name(const char* name, mla_transport* transport) {
  return mla::TransportFromName(name, transport) ? 1 : 0;
}

const char* mla_device_path_name(mla_device_path path) { return mla::DevicePathName(path); }

const char* mla_entry_name(mla_entry entry) { return mla::EntryName(entry); }

}  // extern "C"
