__kernel void combine(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *oPart, __global uchar *lsePart, __global uchar *oLat, __private int rows, __private int heads, __private int numSplits, __private int dc)
{
  float f_148, f_147, f_144, f_143, f_156, f_155, f_152, f_151, f_134, f_133, f_132, f_140, f_139, f_138, f_137, f_136, f_135, f_113, f_112, f_126, f_120, f_119, f_99, f_98, f_106, f_105, f_85, f_84, f_92, f_91, f_70, f_69, f_68, f_67, f_66, f_65, f_64, f_63, f_78, f_77, f_71, f_182, f_181, f_180, f_179, f_178, f_177, f_176, f_175, f_188, f_187, f_186, f_185, f_184, f_183, f_164, f_163, f_160, f_159, f_174, f_173, f_172, f_171, f_168, f_167; 
  double d_154, d_153, d_158, d_157, d_146, d_145, d_150, d_149, d_170, d_169, d_142, d_141, d_162, d_161, d_166, d_165; 
  ulong ul_0, ul_1, ul_33, ul_97, ul_2, ul_61, ul_125, ul_57, ul_90, ul_83, ul_53, ul_118, ul_111, ul_49, ul_76, ul_45, ul_104, ul_41, ul_131, ul_37; 
  int i_121, i_114, i_107, i_100, i_27, i_28, i_29, i_93, i_23, i_24, i_25, i_26, i_19, i_20, i_21, i_22, i_86, i_15, i_79, i_16, i_17, i_18, i_11, i_12, i_13, i_14, i_7, i_8, i_72, i_9, i_10, i_3, i_4, i_5, i_6, i_127, i_191, i_189, i_62, i_190; 
  long l_75, l_74, l_73, l_80, l_52, l_51, l_50, l_56, l_55, l_54, l_60, l_59, l_58, l_36, l_35, l_34, l_40, l_39, l_38, l_44, l_43, l_42, l_48, l_47, l_46, l_32, l_31, l_30, l_130, l_129, l_116, l_115, l_117, l_124, l_123, l_122, l_128, l_103, l_102, l_101, l_108, l_110, l_109, l_82, l_81, l_88, l_87, l_89, l_96, l_95, l_94; 

  // BLOCK 0
  ul_0  =  (ulong) oPart;
  ul_1  =  (ulong) lsePart;
  ul_2  =  (ulong) oLat;
  i_3  =  get_global_size(2);
  i_4  =  get_global_size(1);
  i_5  =  get_global_size(0);
  i_6  =  get_global_id(2);
  i_7  =  get_global_id(1);
  i_8  =  get_global_id(0);
  // BLOCK 1 MERGES [0 8 ]
  i_9  =  i_8;
  for(;i_9 < 1;)
  {
    // BLOCK 2
    i_10  =  i_9 << 4;
    // BLOCK 3 MERGES [2 7 ]
    i_11  =  i_7;
    for(;i_11 < 16;)
    {
      // BLOCK 4
      i_12  =  i_10 + i_11;
      i_13  =  i_12 << 9;
      i_14  =  i_12 << 3;
      i_15  =  i_14 + 7;
      i_16  =  i_15 << 9;
      i_17  =  i_14 + 6;
      i_18  =  i_17 << 9;
      i_19  =  i_14 + 5;
      i_20  =  i_19 << 9;
      i_21  =  i_14 + 4;
      i_22  =  i_21 << 9;
      i_23  =  i_14 + 3;
      i_24  =  i_23 << 9;
      i_25  =  i_14 + 2;
      i_26  =  i_25 << 9;
      i_27  =  i_14 + 1;
      i_28  =  i_27 << 9;
      i_29  =  i_12 << 12;
      l_30  =  (long) i_15;
      l_31  =  l_30 << 2;
      l_32  =  l_31 + 16L;
      ul_33  =  ul_1 + l_32;
      l_34  =  (long) i_17;
      l_35  =  l_34 << 2;
      l_36  =  l_35 + 16L;
      ul_37  =  ul_1 + l_36;
      l_38  =  (long) i_19;
      l_39  =  l_38 << 2;
      l_40  =  l_39 + 16L;
      ul_41  =  ul_1 + l_40;
      l_42  =  (long) i_21;
      l_43  =  l_42 << 2;
      l_44  =  l_43 + 16L;
      ul_45  =  ul_1 + l_44;
      l_46  =  (long) i_23;
      l_47  =  l_46 << 2;
      l_48  =  l_47 + 16L;
      ul_49  =  ul_1 + l_48;
      l_50  =  (long) i_25;
      l_51  =  l_50 << 2;
      l_52  =  l_51 + 16L;
      ul_53  =  ul_1 + l_52;
      l_54  =  (long) i_27;
      l_55  =  l_54 << 2;
      l_56  =  l_55 + 16L;
      ul_57  =  ul_1 + l_56;
      l_58  =  (long) i_14;
      l_59  =  l_58 << 2;
      l_60  =  l_59 + 16L;
      ul_61  =  ul_1 + l_60;
      // BLOCK 5 MERGES [4 6 ]
      i_62  =  i_6;
      for(;i_62 < 512;)
      {
        // BLOCK 6
        f_63  =  *((__global float *) ul_61);
        f_64  =  *((__global float *) ul_57);
        f_65  =  *((__global float *) ul_53);
        f_66  =  *((__global float *) ul_49);
        f_67  =  *((__global float *) ul_45);
        f_68  =  *((__global float *) ul_41);
        f_69  =  *((__global float *) ul_37);
        f_70  =  *((__global float *) ul_33);
        f_71  =  *((__global float *) ul_61);
        i_72  =  i_29 + i_62;
        l_73  =  (long) i_72;
        l_74  =  l_73 << 2;
        l_75  =  l_74 + 16L;
        ul_76  =  ul_0 + l_75;
        f_77  =  *((__global float *) ul_76);
        f_78  =  *((__global float *) ul_57);
        i_79  =  i_28 + i_62;
        l_80  =  (long) i_79;
        l_81  =  l_80 << 2;
        l_82  =  l_81 + 16L;
        ul_83  =  ul_0 + l_82;
        f_84  =  *((__global float *) ul_83);
        f_85  =  *((__global float *) ul_53);
        i_86  =  i_26 + i_62;
        l_87  =  (long) i_86;
        l_88  =  l_87 << 2;
        l_89  =  l_88 + 16L;
        ul_90  =  ul_0 + l_89;
        f_91  =  *((__global float *) ul_90);
        f_92  =  *((__global float *) ul_49);
        i_93  =  i_24 + i_62;
        l_94  =  (long) i_93;
        l_95  =  l_94 << 2;
        l_96  =  l_95 + 16L;
        ul_97  =  ul_0 + l_96;
        f_98  =  *((__global float *) ul_97);
        f_99  =  *((__global float *) ul_45);
        i_100  =  i_22 + i_62;
        l_101  =  (long) i_100;
        l_102  =  l_101 << 2;
        l_103  =  l_102 + 16L;
        ul_104  =  ul_0 + l_103;
        f_105  =  *((__global float *) ul_104);
        f_106  =  *((__global float *) ul_41);
        i_107  =  i_20 + i_62;
        l_108  =  (long) i_107;
        l_109  =  l_108 << 2;
        l_110  =  l_109 + 16L;
        ul_111  =  ul_0 + l_110;
        f_112  =  *((__global float *) ul_111);
        f_113  =  *((__global float *) ul_37);
        i_114  =  i_18 + i_62;
        l_115  =  (long) i_114;
        l_116  =  l_115 << 2;
        l_117  =  l_116 + 16L;
        ul_118  =  ul_0 + l_117;
        f_119  =  *((__global float *) ul_118);
        f_120  =  *((__global float *) ul_33);
        i_121  =  i_16 + i_62;
        l_122  =  (long) i_121;
        l_123  =  l_122 << 2;
        l_124  =  l_123 + 16L;
        ul_125  =  ul_0 + l_124;
        f_126  =  *((__global float *) ul_125);
        i_127  =  i_13 + i_62;
        l_128  =  (long) i_127;
        l_129  =  l_128 << 2;
        l_130  =  l_129 + 16L;
        ul_131  =  ul_2 + l_130;
        f_132  =  fmax(-1.0E30F, f_63);
        f_133  =  fmax(f_132, f_64);
        f_134  =  fmax(f_133, f_65);
        f_135  =  fmax(f_134, f_66);
        f_136  =  fmax(f_135, f_67);
        f_137  =  fmax(f_136, f_68);
        f_138  =  fmax(f_137, f_69);
        f_139  =  fmax(f_138, f_70);
        f_140  =  f_120 - f_139;
        d_141  =  (double) f_140;
        d_142  =  exp(d_141);
        f_143  =  (float) d_142;
        f_144  =  f_113 - f_139;
        d_145  =  (double) f_144;
        d_146  =  exp(d_145);
        f_147  =  (float) d_146;
        f_148  =  f_106 - f_139;
        d_149  =  (double) f_148;
        d_150  =  exp(d_149);
        f_151  =  (float) d_150;
        f_152  =  f_99 - f_139;
        d_153  =  (double) f_152;
        d_154  =  exp(d_153);
        f_155  =  (float) d_154;
        f_156  =  f_92 - f_139;
        d_157  =  (double) f_156;
        d_158  =  exp(d_157);
        f_159  =  (float) d_158;
        f_160  =  f_85 - f_139;
        d_161  =  (double) f_160;
        d_162  =  exp(d_161);
        f_163  =  (float) d_162;
        f_164  =  f_78 - f_139;
        d_165  =  (double) f_164;
        d_166  =  exp(d_165);
        f_167  =  (float) d_166;
        f_168  =  f_71 - f_139;
        d_169  =  (double) f_168;
        d_170  =  exp(d_169);
        f_171  =  (float) d_170;
        f_172  =  fma(f_77, f_171, 0.0F);
        f_173  =  fma(f_84, f_167, f_172);
        f_174  =  fma(f_91, f_163, f_173);
        f_175  =  fma(f_98, f_159, f_174);
        f_176  =  fma(f_105, f_155, f_175);
        f_177  =  fma(f_112, f_151, f_176);
        f_178  =  fma(f_119, f_147, f_177);
        f_179  =  fma(f_126, f_143, f_178);
        f_180  =  f_171 + 0.0F;
        f_181  =  f_180 + f_167;
        f_182  =  f_181 + f_163;
        f_183  =  f_182 + f_159;
        f_184  =  f_183 + f_155;
        f_185  =  f_184 + f_151;
        f_186  =  f_185 + f_147;
        f_187  =  f_186 + f_143;
        f_188  =  f_179 / f_187;
        *((__global float *) ul_131)  =  f_188;
        i_189  =  i_3 + i_62;
        i_62  =  i_189;
      }  // B5
      // BLOCK 7
      i_190  =  i_4 + i_11;
      i_11  =  i_190;
    }  // B3
    // BLOCK 8
    i_191  =  i_5 + i_9;
    i_9  =  i_191;
  }  // B1
  // BLOCK 9
  return;
}
