/* scoll's stand-in for the datatype pool library's configure header: a
 * Linux C library declares everything the library uses. */
