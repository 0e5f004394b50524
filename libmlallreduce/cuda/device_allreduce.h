// device_allreduce.h: the multilane algorithms on device buffers.
#ifndef MLA_CUDA_DEVICE_ALLREDUCE_H_
#define MLA_CUDA_DEVICE_ALLREDUCE_H_

#include <mpi.h>

#include "libmlallreduce/algorithms/algorithms.h"
#include "libmlallreduce/device/device_module.h"
#include "libmlallreduce/algorithms/topology.h"
#include "mlallreduce.h"

namespace mla::lib {
namespace cuda {

// Runs `call` (device buffers on `device`) with `choice`; see
// DeviceModule::allreduce.  *run receives what ran.
int DeviceAllreduce(const AllreduceCall& call, MPI_Comm comm, const Topology& topo, int device,
                    const mla_choice& choice, DeviceRun* run);

// Sets *ppg to the size of this rank's GPU group in `comm` (node ranks whose
// buffers are on `device`'s UUID), building the device state on first use
// (collective over comm).  Returns an MPI error code.
int DeviceRanksPerGpu(MPI_Comm comm, const Topology& topo, int device, int* ppg);

}  // namespace cuda
}  // namespace mla::lib

#endif  // MLA_CUDA_DEVICE_ALLREDUCE_H_
