package org.tornadomla.tornado;

import org.junit.jupiter.api.Test;
import org.tornadomla.graph.KernelRef;
import org.tornadomla.kernels.OnlineSoftmax;
import org.tornadomla.kernels.Projections;

import java.lang.reflect.Parameter;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The KernelContext substitutions are wired by parameter name, and drift between the two signatures fails. */
class SubstitutionTest {
    @Test
    void everySubstitutionMatchesItsPlainKernelByName() {
        assertTrue(TornadoExecutor.SUBSTITUTIONS.size() >= 7);
        for (Substitution s : TornadoExecutor.SUBSTITUTIONS) {
            s.check();   // throws naming the parameter that has no argument of its name and type
            for (Parameter p : s.replacement.getParameters()) assertTrue(p.isNamePresent(), s.name());
        }
        Substitution flash = TornadoExecutor.SUBSTITUTIONS.stream()
                .filter(s -> s.plain.getName().equals("splitTiles")).findFirst().orElseThrow();
        assertEquals("splitKv", flash.replacement.getName());
        // FlashDecode.splitKv's arguments are split_tiles' of the same names, in its own order
        assertEquals(Arrays.asList("ctx", "qLat", "q", "kvFloats", "kvHalves", "kvBytes", "dtype", "oPart", "mlPart", "attnMeta",
                        "blockSize", "heads", "group", "dn", "dr", "dc", "scale", "numSplits"),
                Arrays.stream(flash.replacement.getParameters()).map(Parameter::getName).toList());
    }

    @Test
    void aParameterWithoutAnArgumentOfItsNameIsAnError() {
        // matMul has a 'rows' parameter that matVec lacks: by position it would have taken 'in'
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Substitution
                .replace(KernelRef.of(Projections::matVec), KernelRef.of(GpuProjections::matMul)).grid(a -> 1, 1).check());
        assertTrue(e.getMessage().contains("parameter 'rows' has no argument of that name"), e.getMessage());
        // FlashDecode needs 'group', which split_tiles does not have, unless it is declared as an extra
        IllegalStateException g = assertThrows(IllegalStateException.class, () -> Substitution
                .replace(KernelRef.of(OnlineSoftmax::splitTiles), KernelRef.of(FlashDecode::splitKv)).grid(a -> 1, 1).check());
        assertTrue(g.getMessage().contains("'group'"), g.getMessage());
    }
}
