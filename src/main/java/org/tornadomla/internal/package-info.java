/**
 * Helpers every package of the library uses (heap checks before large allocations). Not API: the module does not
 * export this package.
 */
package org.tornadomla.internal;
