// elf_needed.cc: DT_NEEDED of a program file (elf_needed.h).
#include "vocab/elf_needed.h"

#include <elf.h>

#include <cstring>

#include "vocab/outside_input.h"

namespace mla {
namespace {

constexpr size_t kMaxImageBytes = size_t{64} << 20;
constexpr size_t kMaxNeeded = 4096;

// Copies a T from image[offset], false when it does not fit.
template <typename T>
bool At(std::string_view image, uint64_t offset, T* out) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
  std::memcpy(out, image.data() + offset, sizeof(T));
  return true;
}

// The file offset of virtual address `vaddr`, from the PT_LOAD headers.
bool FileOffset(std::string_view image, const Elf64_Ehdr& eh, uint64_t vaddr, uint64_t* offset) {
  for (uint64_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!At(image, eh.e_phoff + i * sizeof(Elf64_Phdr), &ph)) return false;
    if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
      *offset = ph.p_offset + (vaddr - ph.p_vaddr);
      return true;
    }
  }
  return false;
}

// The program header of the dynamic section; false when there is none.
bool DynamicHeader(std::string_view image, const Elf64_Ehdr& eh, Elf64_Phdr* dynamic) {
  for (uint64_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!At(image, eh.e_phoff + i * sizeof(Elf64_Phdr), &ph)) return false;
    if (ph.p_type == PT_DYNAMIC) {
      *dynamic = ph;
      return true;
    }
  }
  return false;
}

}  // namespace

bool ElfNeededFromImage(std::string_view image, std::vector<std::string>* needed, std::string* why) {
  needed->clear();
  Elf64_Ehdr eh;
  if (!At(image, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return *why = "not an ELF file", false;
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_phentsize != sizeof(Elf64_Phdr))
    return *why = "not a 64-bit little-endian ELF file", false;
  Elf64_Phdr dynamic;
  if (!DynamicHeader(image, eh, &dynamic)) return true;  // static: needs nothing
  std::vector<uint64_t> names;
  uint64_t strtab = 0, strsz = 0;
  bool have_strtab = false;
  for (uint64_t off = dynamic.p_offset; off - dynamic.p_offset < dynamic.p_filesz; off += sizeof(Elf64_Dyn)) {
    Elf64_Dyn d;
    if (!At(image, off, &d)) return *why = "the dynamic section runs past the end of the file", false;
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_NEEDED && names.size() < kMaxNeeded) names.push_back(d.d_un.d_val);
    if (d.d_tag == DT_STRTAB) have_strtab = FileOffset(image, eh, d.d_un.d_ptr, &strtab);
    if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
  }
  if (names.empty()) return true;
  if (!have_strtab || strtab > image.size() || strsz > image.size() - strtab)
    return *why = "the dynamic string table lies outside the file", false;
  const std::string_view strings = image.substr(strtab, strsz);
  for (uint64_t at : names) {
    if (at >= strings.size()) return *why = "a needed library's name lies outside the string table", false;
    const std::string_view rest = strings.substr(at);
    needed->emplace_back(rest.substr(0, rest.find('\0')));
  }
  return true;
}

bool ElfNeeded(const std::string& path, std::vector<std::string>* needed, std::string* why) {
  std::string image;
  const mla::FileRead r = mla::ReadFileBounded(path, kMaxImageBytes, false, &image);
  if (r.outcome == mla::FileRead::Outcome::kTooLarge) return *why = "larger than 64 MiB", false;
  if (r.outcome != mla::FileRead::Outcome::kRead) return *why = "cannot be read", false;
  return ElfNeededFromImage(image, needed, why);
}

}  // namespace mla
