// Counts calls of the global operator new, to hold the closed-form paths to
// "no allocation" (DESIGN.md: the hot path of search and sweeps). A test
// binary that links count_allocations.cpp replaces every form of the global
// operator new and delete with a counting malloc/free pair; the test reads
// AllocationCount() before and after the code it holds to none.
#pragma once

namespace orrery::test {

// Calls of any form of the global operator new in this process so far.
long AllocationCount();

}  // namespace orrery::test
