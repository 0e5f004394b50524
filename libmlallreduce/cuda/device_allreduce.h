// device_allreduce.h: the multilane algorithms on device buffers.
#ifndef MLA_CUDA_DEVICE_ALLREDUCE_H_
#define MLA_CUDA_DEVICE_ALLREDUCE_H_

#include <mpi.h>

#include "../algorithms.h"
#include "../topology.h"
#include "mlallreduce.h"

namespace mla {
namespace cuda {

// Runs `call` (device buffers on `device`) with `choice`; see
// DeviceModule::allreduce.  *ran receives the algorithm that ran.
int DeviceAllreduce(const AllreduceCall& call, MPI_Comm comm, const Topology& topo, int device,
                    const mla_choice& choice, mla_algo* ran);

}  // namespace cuda
}  // namespace mla

#endif  // MLA_CUDA_DEVICE_ALLREDUCE_H_
