#include "libmlallreduce/algorithms/call_support.h"

namespace mla::lib {
namespace {

// `text`, with *why (when not null) set to `kind`.
const char* Because(Unsupported* why, Unsupported kind, const char* text) {
  if (why != nullptr) *why = kind;
  return text;
}

}  // namespace

bool InvalidArguments(MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return comm == MPI_COMM_NULL || datatype == MPI_DATATYPE_NULL || op == MPI_OP_NULL || op == MPI_REPLACE ||
         op == MPI_NO_OP;
}

const char* UnsupportedReason(MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, Unsupported* why) {
  if (comm == MPI_COMM_NULL) return Because(why, Unsupported::kArguments, "null communicator");
  if (datatype == MPI_DATATYPE_NULL) return Because(why, Unsupported::kArguments, "null datatype");
  if (InvalidArguments(datatype, op, comm)) return Because(why, Unsupported::kArguments, "op not valid for allreduce");

  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
    return Because(why, Unsupported::kIntercomm, "intercommunicator");
  int size = 0;
  if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2)
    return Because(why, Unsupported::kOneRank, "communicator of one rank");

  int commutative = 0;
  if (PMPI_Op_commutative(op, &commutative) != MPI_SUCCESS || !commutative)
    return Because(why, Unsupported::kOp, "non-commutative op");

  int num_integers = 0, num_addresses = 0, num_datatypes = 0, combiner = 0;
  if (PMPI_Type_get_envelope(datatype, &num_integers, &num_addresses, &num_datatypes, &combiner) != MPI_SUCCESS) {
    return Because(why, Unsupported::kDatatype, "datatype not readable");
  }
  int type_size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size(datatype, &type_size) != MPI_SUCCESS || type_size <= 0)
    return Because(why, Unsupported::kDatatype, "datatype of size 0");
  if (combiner == MPI_COMBINER_NAMED) {
    // Predefined types may have padding (MPI_LONG_DOUBLE_INT): blocks are cut
    // on the extent, which is all the algorithms need.
    if (PMPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS || lb != 0 || extent <= 0) {
      return Because(why, Unsupported::kDatatype, "datatype with a lower bound");
    }
    return nullptr;
  }
  if (PMPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(datatype, &true_lb, &true_extent) != MPI_SUCCESS) {
    return Because(why, Unsupported::kDatatype, "datatype not readable");
  }
  if (lb != 0 || true_lb != 0 || extent != type_size || true_extent != type_size) {
    return Because(why, Unsupported::kDatatype, "non-contiguous datatype");
  }
  return nullptr;
}

}  // namespace mla::lib
