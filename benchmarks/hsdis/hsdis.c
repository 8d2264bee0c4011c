/*
 * A disassembler plugin for HotSpot's -XX:+PrintAssembly, on Capstone: HotSpot dlopen()s hsdis-amd64.so and
 * calls decode_instructions_virtual for each range of machine code it prints. Built by build.sh; not part of
 * the library. Only what PrintAssembly needs: x86-64, AT&T syntax, one instruction per line.
 */
#include <stdint.h>
#include <capstone/capstone.h>

typedef void* (*event_callback)(void* stream, const char* event, void* arg);
typedef int (*printf_callback)(void* stream, const char* format, ...);

void* decode_instructions_virtual(uintptr_t start_va, uintptr_t end_va, unsigned char* buffer, uintptr_t length,
                                  event_callback event, void* event_stream, printf_callback print, void* print_stream,
                                  const char* options, int newline) {
    csh handle;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) return NULL;
    cs_option(handle, CS_OPT_SKIPDATA, CS_OPT_ON);    /* bytes it cannot decode are printed as data, not dropped */
    cs_insn* insn;
    size_t n = cs_disasm(handle, buffer, length, start_va, 0, &insn);
    for (size_t i = 0; i < n; i++) {
        if (event) event(event_stream, "insn", (void*) insn[i].address);
        print(print_stream, "%s\t%s", insn[i].mnemonic, insn[i].op_str);
        if (event) event(event_stream, "/insn", (void*) (insn[i].address + insn[i].size));
        if (newline) print(print_stream, "\n");
    }
    if (n > 0) cs_free(insn, n);
    cs_close(&handle);
    return NULL;
}
