/* A stand-in bcryptprimitives.dll for the wine smoke test (scripts/wine-smoke) only.
 *
 * Rust's std on Windows fills its random numbers (HashMap keys, ...) with ProcessPrng
 * from bcryptprimitives.dll, which wine only has from 8.13 on: under an older wine (the
 * 8.0 of Debian 12) every Rust program fails to load. This DLL exports ProcessPrng and
 * forwards it to advapi32's RtlGenRandom (SystemFunction036), which wine has had for
 * ages. scripts/wine-smoke builds it with mingw into a temporary directory and copies it
 * into a throw-away wine prefix. It is test scaffolding: never built into, shipped with
 * or installed by ccmem; real Windows has its own bcryptprimitives.dll. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom */

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) { /* RtlGenRandom takes a ULONG length; ProcessPrng a SIZE_T one */
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE; /* ProcessPrng "always returns TRUE"; this one cannot promise it */
        data += n;
        len -= n;
    }
    return TRUE;
}
