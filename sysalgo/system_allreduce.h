// system_allreduce.h: the system MPI's own allreduce algorithms, chosen
// inside a running job, so that the benchmark (and the tuner) can measure
// each of them beside the system's default and beside multilane's.
//
// How a choice is made, per MPI (found through the MPI tool interface,
// MPI_T, at run time; nothing here depends on which mpi.h it was built with):
// - Open MPI, coll/tuned: the variable coll_tuned_allreduce_algorithm is
//   copied into a communicator when the communicator is made, so a choice is
//   a copy of the caller's communicator (a split) made right after writing the
//   variable (and its segment size), which is then written back.  Tuned takes
//   a forced algorithm only while its dynamic rules are on: they must be on
//   when the job starts (PrepareBeforeInit, or
//   OMPI_MCA_coll_tuned_use_dynamic_rules=1), and a rules file of the user's
//   (coll_tuned_dynamic_rules_filename) would take precedence over a forced
//   algorithm, so none is made then.  Open MPI 5's coll/han, above tuned's
//   priority, takes every communicator that spans machines and runs its
//   allreduce in steps on communicators of its own: there no choice is made
//   (the system's default, han, is what runs).  On one machine han steps
//   aside and tuned's choices hold.
// - MPICH (ch4): MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM is read by every call,
//   and only while the device's own collectives are off
//   (MPIR_CVAR_DEVICE_COLLECTIVES=none); a choice writes both, Release puts
//   them back.  MPICH publishes no names for the values, only their order in
//   a description, so the names come from a table per MPICH release, checked
//   against that description.  None is offered where the user set either
//   variable (or a selection file) in the environment: their setting wins.
//
// Every rank of a communicator must make the same choice at the same time:
// ranks that run different algorithms deadlock or compute wrong results.
#ifndef MLSYS_SYSTEM_ALLREDUCE_H_
#define MLSYS_SYSTEM_ALLREDUCE_H_

#include <mpi.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mlsys {

// Before MPI_Init: turns on Open MPI coll/tuned's dynamic rules for this
// process (OMPI_MCA_coll_tuned_use_dynamic_rules=1), which with nothing
// forced and no rules file decide exactly as the fixed rules do.  Returns ""
// when a chosen algorithm may run (the rules turned on here, or by the user
// with no allreduce choice of their own), else why not: the user turned the
// rules off; the user turned them on and chose the allreduce's algorithm, its
// parameters or a rules file (their choice wins); or the rules are off and
// any coll_tuned_ setting of the user's (in the environment or an MCA
// parameter file) would come into force with them.  Decided by each process
// alone from its own environment and files: a caller that acts on it in a
// collective agrees with the other ranks first.  Harmless under other MPIs.
std::string PrepareBeforeInit();

class SystemAllreduce {
 public:
  // Finds the choosable algorithms (after MPI_Init).  None found: names() is
  // empty and why_none() says why and what would fix it.
  SystemAllreduce();
  // Frees the communicators it made: destroy it before MPI_Finalize.  The
  // MPI tool interface it started stays initialized until MPI_Finalize.
  ~SystemAllreduce();
  SystemAllreduce(const SystemAllreduce&) = delete;
  SystemAllreduce& operator=(const SystemAllreduce&) = delete;

  // The algorithms' names, in the MPI's own order ("ring", "rabenseifner").
  const std::vector<std::string>& names() const { return names_; }
  // Which mechanism: "Open MPI coll/tuned", "MPICH"; empty when none.
  const std::string& mechanism() const { return mechanism_; }
  const std::string& why_none() const { return why_none_; }

  // False when algorithm `name` must not run a call of `count` elements of
  // a commutative (or not) op on `comm_size` ranks: it would abort, compute
  // a wrong result, or silently run another algorithm.
  bool Applies(const std::string& name, long count, long bytes, int comm_size, bool commutative) const;

  // Makes `name` the algorithm PMPI_Allreduce runs on the communicator it
  // returns (comm itself, or a copy of it kept until destruction), until
  // Release().  Collective over comm.  MPI_COMM_NULL with *error when the
  // name is unknown or the MPI refused.
  MPI_Comm Select(const std::string& name, MPI_Comm comm, std::string* error);
  // The system's own selection again (MPICH: the variables as they were).
  void Release();

  // True where a choice lives in a communicator (Open MPI: MakeCommunicator),
  // false where it is a variable read at each call (MPICH: Select, Release).
  bool ChoosesPerCommunicator() const { return mechanism_ == kOpenMpi; }
  // Open MPI: a new communicator over comm's group, in comm's rank order, on
  // which PMPI_Allreduce runs `name`; made without copying comm's attributes;
  // the caller frees it.  Collective over comm.  MPI_COMM_NULL with *error
  // when the name is unknown, the MPI refused, or choices are per call here.
  MPI_Comm MakeCommunicator(const std::string& name, MPI_Comm comm, std::string* error);

 private:
  struct Variable {
    int index = -1;
    MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  };
  bool OpenVariable(const char* name, Variable* v);
  bool ReadInt(const Variable& v, int* value) const;
  bool WriteInt(const Variable& v, int value) const;
  void FindOpenMpi();
  void FindHan();
  void FindMpich();
  static std::string ReadSelection(const char* framework);
  // Whether comm's ranks are on more than one machine.  Collective over comm.
  static bool SpansMachines(MPI_Comm comm);
  MPI_Comm SelectOpenMpi(int value, bool segmented, MPI_Comm comm, std::string* error);
  MPI_Comm MakeOpenMpi(int value, bool segmented, MPI_Comm comm, std::string* error);

  static constexpr const char* kOpenMpi = "Open MPI coll/tuned";
  int IndexOf(const std::string& name, std::string* error) const;

  std::string mechanism_, why_none_;
  std::string han_over_tuned_;  // Open MPI: why no choice is made on a communicator that spans machines
  std::vector<std::string> names_;
  std::vector<int> values_;  // the variable's value for each name
  Variable algorithm_, segment_, device_;
  int device_none_ = -1;  // MPICH: the value of "none"
  int saved_algorithm_ = 0, saved_device_ = 0;
  bool selected_ = false;
  std::map<std::pair<MPI_Comm, int>, MPI_Comm> dups_;  // Open MPI: (comm, value) -> duplicate
};

}  // namespace mlsys

#endif  // MLSYS_SYSTEM_ALLREDUCE_H_
