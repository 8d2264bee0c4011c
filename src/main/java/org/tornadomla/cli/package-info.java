/** The {@code mla} command line (picocli): one class per subcommand. A tool, not library API. */
package org.tornadomla.cli;
