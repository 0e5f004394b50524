/*
 * mlallreduce_types.h: the types, names and version of libmlallreduce's
 * public C interface, without MPI: what a program that only reads profiles,
 * counters or algorithm names needs (mlallreduce.h includes it and adds the
 * functions that take MPI handles).
 *
 * The library's version is written here and nowhere else: CMake reads
 * MLA_VERSION_STRING from this file for the project's version.
 */
#ifndef MLALLREDUCE_TYPES_H_
#define MLALLREDUCE_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MLA_API __attribute__((visibility("default")))
#else
#define MLA_API
#endif

/* Version of the library and of its profile format.  A profile made by
 * another library version is still read if its format version matches. */
#define MLA_VERSION_STRING "0.1.0"
#define MLA_PROFILE_FORMAT_VERSION 1

/* The allreduce algorithms (docs/algorithms.md defines each). */
typedef enum mla_algo {
  MLA_ALGO_PASSTHROUGH = 0, /* PMPI_Allreduce on the caller's communicator */
  MLA_ALGO_LANE = 1,        /* reduce-scatter in node, allreduce per lane, allgather in node */
  MLA_ALGO_HIER = 2,        /* reduce to node leader, allreduce of leaders, broadcast in node */
  MLA_ALGO_SPLIT = 3,       /* reduce-scatter in GPU group, allreduce per slice index, allgather */
  MLA_ALGO_COUNT = 4
} mla_algo;

/* How a call's data moves.  Device buffers: the step between nodes (lane) or
 * GPUs (split); steps inside a node always use CUDA IPC.  Host buffers: the
 * steps inside a node of lane and hier (shm), else the system MPI's
 * point-to-point; the step between nodes always uses the system MPI. */
typedef enum mla_transport {
  MLA_TRANSPORT_AUTO = 0, /* device: NCCL when it is loaded and can run the call, else MPI; host: MPI */
  MLA_TRANSPORT_MPI = 1,  /* device: host staging (pinned buffers, pipelined chunks, the system MPI) */
  MLA_TRANSPORT_NCCL = 2, /* device: NCCL, one communicator per lane (one rank per GPU in each) */
  MLA_TRANSPORT_SHM = 3,  /* host: lane's and hier's node steps through a shared-memory segment of
                             the node's ranks (docs/algorithms.md); device buffers: as auto */
  MLA_TRANSPORT_COUNT = 4
} mla_transport;

/* How one call is to be run: an algorithm and its parameters.  Zero-filled
 * fields mean the defaults. */
typedef struct mla_choice {
  mla_algo algo;
  int lanes;               /* lane: how many ranks of each node drive lanes; 0 = all */
  uint64_t chunk_bytes;    /* largest piece of the message handled per step; 0 = default */
  mla_transport transport; /* device buffers: the transport between nodes or GPUs */
} mla_choice;

/* How a call with device (GPU) buffers moved its data, for the counters.
 * Each device call that succeeds counts in exactly one of these. */
typedef enum mla_device_path {
  MLA_PATH_IPC = 0,    /* every step inside one node (or GPU) through CUDA IPC: the layout has
                          no step between nodes (or GPUs, for split), or this call's data had none */
  MLA_PATH_MPI = 1,    /* the step between nodes or GPUs went through pinned host buffers and the
                          system MPI (transport mpi) on every lane that carried data */
  MLA_PATH_NCCL = 2,   /* the step between nodes or GPUs went through NCCL on every lane that
                          carried data (transport nccl) */
  MLA_PATH_STAGED = 3, /* the whole call was staged through host memory into one PMPI_Allreduce
                          (passthrough, types and ops without kernels, mixed buffers, buffers
                          CUDA IPC cannot share) */
  MLA_PATH_COUNT = 4
} mla_device_path;

/* The library's own counters, per process, since start or the last reset. */
typedef struct mla_stats {
  uint64_t calls;                         /* MPI_Allreduce/mla_allreduce* calls seen */
  uint64_t calls_by_algo[MLA_ALGO_COUNT]; /* calls completed by each algorithm */
  uint64_t bytes_by_algo[MLA_ALGO_COUNT]; /* message bytes (count x type size) per algorithm */
  uint64_t unsupported;                   /* calls a multilane algorithm was chosen for but that went to
                                             PMPI_Allreduce (datatype, op, communicator or layout) */
  uint64_t device_calls;                  /* calls with device (GPU) buffers, whatever ran them */
  uint64_t ipc_opened;                    /* peer GPU allocations mapped with CUDA IPC (cache misses) */
  uint64_t ipc_hits;                      /* peer buffer lookups served by the IPC handle cache */
  uint64_t calls_by_path[MLA_PATH_COUNT]; /* device calls by how their data moved */
  uint64_t nccl_fallbacks;                /* device calls run with transport nccl whose step between nodes or
                                             GPUs went through MPI staging instead (NCCL missing or unusable,
                                             two ranks of a lane on one GPU, or a type/op NCCL does not carry);
                                             such calls also count in calls_by_path[MLA_PATH_MPI] */
  uint64_t ipc_closed;                    /* peer allocations closed by the IPC handle cache (beyond its
                                             1024-entry limit, least recently used first) */
  uint64_t device_flag_calls;             /* device calls that ran on the flag path: one node, at most
                                             MULTILANE_DEVICE_FLAG_MAX bytes, the ranks meeting on the GPU
                                             (docs/gpu.md); they also count in calls_by_path[MLA_PATH_IPC] */
  uint64_t device_flag_one_shot;          /* of those, the one-shot form (hier, or lane with one lane) */
} mla_stats;

/* The ways a program reaches an allreduce (docs/user.md, "Which programs get
 * multilane").  The blocking forms run multilane's choice; the others are
 * counted and handed to the system MPI's own function unchanged. */
typedef enum mla_entry {
  MLA_ENTRY_C = 0,           /* MPI_Allreduce: C, C++, Python, and MPICH's Fortran bindings (which call it) */
  MLA_ENTRY_FORTRAN = 1,     /* Open MPI's mpif.h and `use mpi` symbols (mpi_allreduce_ and its other manglings) */
  MLA_ENTRY_F08 = 2,         /* Open MPI's `use mpi_f08` */
  MLA_ENTRY_LARGE_COUNT = 3, /* MPI_Allreduce_c (MPI-4): served up to INT_MAX elements, passed on beyond */
  MLA_ENTRY_NONBLOCKING = 4, /* MPI_Iallreduce, C and Fortran: passed on */
  MLA_ENTRY_PERSISTENT = 5,  /* MPI_Allreduce_init (MPI-4), MPIX_Allreduce_init (Open MPI 4.1): passed on,
                                one count per init (its MPI_Start calls are not seen) */
  MLA_ENTRY_COUNT = 6
} mla_entry;

/* Calls per entry point, per process, since start or the last reset. */
typedef struct mla_entry_stats {
  uint64_t calls[MLA_ENTRY_COUNT];     /* calls that came in through each entry point */
  uint64_t passed_on[MLA_ENTRY_COUNT]; /* of those, calls handed to the system MPI's own function without
                                          multilane's dispatch (nonblocking, persistent, counts beyond
                                          INT_MAX); calls the dispatch sent to the system MPI are counted
                                          in mla_stats instead (passthrough, unsupported) */
} mla_entry_stats;

/* The layout the library sees for a communicator. */
typedef struct mla_layout {
  int size;           /* ranks in the communicator */
  int nodes;          /* (virtual) nodes; 0 when the layout is irregular */
  int ranks_per_node; /* ranks on this rank's node */
  int ranks_per_gpu;  /* ranks sharing a GPU as the host-memory algorithms see it: consecutive
                         ranks of the node, MULTILANE_RANKS_PER_GPU of them (1 when unset).
                         Calls on device buffers use the GPU groups found from the devices'
                         UUIDs instead (docs/gpu.md) */
  int node_rank;      /* this rank's index within its node (its lane) */
  int regular;        /* 1 when every node holds the same number of ranks */
  int gpus_regular;   /* 1 when, besides, every GPU is shared by the same number of ranks
                         (what split needs) */
} mla_layout;

/* Copies this process's counters into *stats. */
MLA_API void mla_get_stats(mla_stats* stats);

/* Sets this process's counters to zero. */
MLA_API void mla_reset_stats(void);

/* Returns "auto", "mpi", "nccl", or "unknown". */
MLA_API const char* mla_transport_name(mla_transport transport);

/* Parses a transport name; returns 1 and sets *transport on success, else 0. */
MLA_API int mla_transport_from_name(const char* name, mla_transport* transport);

/* Returns "ipc", "mpi", "nccl", "staged", or "unknown". */
MLA_API const char* mla_device_path_name(mla_device_path path);

/* Copies this process's calls per entry point into *stats. */
MLA_API void mla_get_entry_stats(mla_entry_stats* stats);

/* The passthrough calls that the system MPI's own algorithm number `index`
 * (0, 1, ...: in the order they first ran) ran for a profile's `passthrough
 * mpi=NAME`, since start or the last reset, with *name (when not null) set
 * to NAME: the stats line's mpi:NAME=N.  Returns -1 past the last one. */
MLA_API long long mla_system_algo_calls(int index, const char** name);

/* Returns "c", "fortran", "f08", "large_count", "nonblocking", "persistent",
 * or "unknown": the names of the stats line and the job report. */
MLA_API const char* mla_entry_name(mla_entry entry);

/* Returns "passthrough", "lane", "hier", "split", or "unknown". */
MLA_API const char* mla_algo_name(mla_algo algo);

/* Parses an algorithm name; returns 1 and sets *algo on success, else 0. */
MLA_API int mla_algo_from_name(const char* name, mla_algo* algo);

/* Returns 1 when the library runs multilane algorithms in this process, 0 when
 * a bad variable or profile (or an inconsistent environment across ranks) made
 * it pass every call to the system MPI. */
MLA_API int mla_enabled(void);

/* Returns MLA_VERSION_STRING of the loaded library. */
MLA_API const char* mla_version(void);

/* Returns the MPI family this build of the library serves ("openmpi",
 * "mpich"): the front libmlallreduce.so forwards only to the build of the
 * job's family. */
MLA_API const char* mla_build_family(void);

#ifdef __cplusplus
}
#endif

#endif /* MLALLREDUCE_TYPES_H_ */
