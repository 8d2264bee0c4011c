__kernel void splitTiles(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *qLat, __global uchar *q, __global uchar *kvF32, __global uchar *kvBf16, __global uchar *kvInt8, __private int dtype, __global uchar *sTile, __global uchar *oPart, __global uchar *lsePart, __global uchar *seqStart, __private int batch, __private int tokens, __private int capacity, __private int heads, __private int dn, __private int dr, __private int dc, __private float scale, __private int tileSize, __private int numSplits)
{
  float f_86, f_84, f_83, f_82, f_81, f_145, f_93, f_134, f_133, f_68, f_131, f_195, f_130, f_194, f_142, f_141, f_75, f_117, f_116, f_51, f_50, f_190, f_189, f_124, f_188, f_121, f_56, f_120, f_162, f_109, f_173, f_108, f_107, f_171, f_106, f_170, f_169, f_168; 
  double d_123, d_122, d_143, d_193, d_144, d_192; 
  ulong ul_0, ul_64, ul_1, ul_129, ul_161, ul_2, ul_98, ul_187, ul_92, ul_152, ul_115, ul_20, ul_180, ul_79, ul_140, ul_7, ul_105, ul_74, ul_3, ul_4, ul_5, ul_6, ul_38, ul_166; 
  char ch_167, ch_99, ch_80; 
  int i_119, i_118, i_111, i_110, i_100, i_101, i_95, i_94, i_23, i_24, i_25, i_153, i_26, i_154, i_147, i_148, i_21, i_22, i_15, i_16, i_146, i_11, i_12, i_13, i_14, i_135, i_8, i_136, i_9, i_10, i_132, i_125, i_55, i_183, i_57, i_58, i_52, i_53, i_181, i_54, i_182, i_47, i_175, i_48, i_176, i_49, i_43, i_44, i_172, i_45, i_46, i_174, i_39, i_40, i_41, i_42, i_163, i_31, i_32, i_33, i_34, i_27, i_155, i_28, i_156, i_29, i_157, i_30, i_87, i_88, i_85, i_76, i_67, i_196, i_69, i_197, i_70, i_198, i_191, i_65, i_66, i_59, i_60; 
  long l_72, l_71, l_139, l_138, l_73, l_137, l_78, l_77, l_179, l_114, l_178, l_113, l_177, l_184, l_186, l_185, l_128, l_63, l_127, l_62, l_126, l_61, l_36, l_164, l_35, l_97, l_104, l_103, l_102, l_37, l_165, l_112, l_19, l_18, l_17, l_151, l_150, l_149, l_91, l_90, l_89, l_96, l_160, l_159, l_158; 

  // BLOCK 0
  ul_0  =  (ulong) qLat;
  ul_1  =  (ulong) q;
  ul_2  =  (ulong) kvF32;
  ul_3  =  (ulong) kvInt8;
  ul_4  =  (ulong) sTile;
  ul_5  =  (ulong) oPart;
  ul_6  =  (ulong) lsePart;
  ul_7  =  (ulong) seqStart;
  i_8  =  get_global_size(2);
  i_9  =  get_global_size(1);
  i_10  =  get_global_size(0);
  i_11  =  get_global_id(2);
  i_12  =  get_global_id(1);
  i_13  =  get_global_id(0);
  // BLOCK 1 MERGES [0 38 ]
  i_14  =  i_13;
  for(;i_14 < 1;)
  {
    // BLOCK 2
    i_15  =  i_14 << 8;
    i_16  =  i_14 << 4;
    l_17  =  (long) i_14;
    l_18  =  l_17 << 2;
    l_19  =  l_18 + 16L;
    ul_20  =  ul_7 + l_19;
    // BLOCK 3 MERGES [2 37 ]
    i_21  =  i_12;
    for(;i_21 < 16;)
    {
      // BLOCK 4
      i_22  =  i_16 + i_21;
      i_23  =  i_22 << 7;
      i_24  =  i_22 << 6;
      i_25  =  i_23 + i_24;
      i_26  =  i_25 + 128;
      i_27  =  i_22 << 9;
      i_28  =  i_22 << 3;
      // BLOCK 5 MERGES [4 36 ]
      i_29  =  i_11;
      for(;i_29 < 8;)
      {
        // BLOCK 6
        i_30  =  *((__global int *) ul_20);
        i_31  =  i_28 + i_29;
        i_32  =  i_31 << 9;
        // BLOCK 7 MERGES [6 8 ]
        i_33  =  0;
        for(;i_33 < 512;)
        {
          // BLOCK 8
          i_34  =  i_32 + i_33;
          l_35  =  (long) i_34;
          l_36  =  l_35 << 2;
          l_37  =  l_36 + 16L;
          ul_38  =  ul_5 + l_37;
          *((__global float *) ul_38)  =  0.0F;
          i_39  =  i_33 + 1;
          i_33  =  i_39;
        }  // B7
        // BLOCK 9
        i_40  =  i_30 + 1;
        i_41  =  i_30 + 8;
        i_42  =  i_41 >> 31;
        i_43  =  i_42 >> 29;
        i_44  =  i_43 + i_41;
        i_45  =  i_44 >> 3;
        i_46  =  i_45 * i_29;
        i_47  =  i_46 + i_45;
        i_48  =  min(i_40, i_47);
        i_49  =  i_31 << 6;
        // BLOCK 10 MERGES [9 29 ]
        f_50  =  -1.0E30F;
        f_51  =  0.0F;
        i_52  =  i_46;
        for(;i_52 < i_48;)
        {
          // BLOCK 11
          i_53  =  i_15 + i_52;
          i_54  =  i_48 - i_52;
          i_55  =  min(64, i_54);
          // BLOCK 12 MERGES [11 19 ]
          f_56  =  -1.0E30F;
          i_57  =  0;
          for(;i_57 < i_55;)
          {
            // BLOCK 13
            i_58  =  i_53 + i_57;
            i_59  =  i_58 << 1;
            i_60  =  i_59 + 0;
            l_61  =  (long) i_60;
            l_62  =  l_61 << 2;
            l_63  =  l_62 + 16L;
            ul_64  =  ul_2 + l_63;
            i_65  =  i_58 << 9;
            i_66  =  i_58 << 6;
            i_67  =  i_65 + i_66;
            // BLOCK 14 MERGES [13 15 ]
            f_68  =  0.0F;
            i_69  =  0;
            for(;i_69 < 512;)
            {
              // BLOCK 15
              i_70  =  i_27 + i_69;
              l_71  =  (long) i_70;
              l_72  =  l_71 << 2;
              l_73  =  l_72 + 16L;
              ul_74  =  ul_0 + l_73;
              f_75  =  *((__global float *) ul_74);
              i_76  =  i_67 + i_69;
              l_77  =  (long) i_76;
              l_78  =  l_77 + 16L;
              ul_79  =  ul_3 + l_78;
              ch_80  =  *((__global char *) ul_79);
              f_81  =  *((__global float *) ul_64);
              f_82  =  (float) ch_80;
              f_83  =  f_81 * f_82;
              f_84  =  fma(f_83, f_75, f_68);
              i_85  =  i_69 + 1;
              f_68  =  f_84;
              i_69  =  i_85;
            }  // B14
            // BLOCK 16
            // BLOCK 17 MERGES [16 18 ]
            f_86  =  f_68;
            i_87  =  0;
            for(;i_87 < 64;)
            {
              // BLOCK 18
              i_88  =  i_26 + i_87;
              l_89  =  (long) i_88;
              l_90  =  l_89 << 2;
              l_91  =  l_90 + 16L;
              ul_92  =  ul_1 + l_91;
              f_93  =  *((__global float *) ul_92);
              i_94  =  i_87 + 512;
              i_95  =  i_94 + i_67;
              l_96  =  (long) i_95;
              l_97  =  l_96 + 16L;
              ul_98  =  ul_3 + l_97;
              ch_99  =  *((__global char *) ul_98);
              i_100  =  (i_94 < 512) ? 0 : 1;
              i_101  =  i_100 + i_59;
              l_102  =  (long) i_101;
              l_103  =  l_102 << 2;
              l_104  =  l_103 + 16L;
              ul_105  =  ul_2 + l_104;
              f_106  =  *((__global float *) ul_105);
              f_107  =  (float) ch_99;
              f_108  =  f_106 * f_107;
              f_109  =  fma(f_108, f_93, f_86);
              i_110  =  i_87 + 1;
              f_86  =  f_109;
              i_87  =  i_110;
            }  // B17
            // BLOCK 19
            i_111  =  i_49 + i_57;
            l_112  =  (long) i_111;
            l_113  =  l_112 << 2;
            l_114  =  l_113 + 16L;
            ul_115  =  ul_4 + l_114;
            f_116  =  f_86 * 0.13523377F;
            *((__global float *) ul_115)  =  f_116;
            f_117  =  fmax(f_56, f_116);
            i_118  =  i_57 + 1;
            f_56  =  f_117;
            i_57  =  i_118;
          }  // B12
          // BLOCK 20
          // BLOCK 21 MERGES [20 22 ]
          i_119  =  0;
          for(;;)
          {
            f_120  =  fmax(f_50, f_56);
            f_121  =  f_50 - f_120;
            d_122  =  (double) f_121;
            d_123  =  exp(d_122);
            f_124  =  (float) d_123;
            if(!(i_119 < 512))
            {
              break;
            }
            // BLOCK 22
            i_125  =  i_119 + i_32;
            l_126  =  (long) i_125;
            l_127  =  l_126 << 2;
            l_128  =  l_127 + 16L;
            ul_129  =  ul_5 + l_128;
            f_130  =  *((__global float *) ul_129);
            f_131  =  f_124 * f_130;
            *((__global float *) ul_129)  =  f_131;
            i_132  =  i_119 + 1;
            i_119  =  i_132;
          }  // B21
          // BLOCK 23
          f_133  =  f_51 * f_124;
          // BLOCK 24 MERGES [23 28 ]
          f_134  =  f_133;
          i_135  =  0;
          for(;i_135 < i_55;)
          {
            // BLOCK 25
            i_136  =  i_135 + i_49;
            l_137  =  (long) i_136;
            l_138  =  l_137 << 2;
            l_139  =  l_138 + 16L;
            ul_140  =  ul_4 + l_139;
            f_141  =  *((__global float *) ul_140);
            f_142  =  f_141 - f_120;
            d_143  =  (double) f_142;
            d_144  =  exp(d_143);
            f_145  =  (float) d_144;
            i_146  =  i_53 + i_135;
            i_147  =  i_146 << 1;
            i_148  =  i_147 + 0;
            l_149  =  (long) i_148;
            l_150  =  l_149 << 2;
            l_151  =  l_150 + 16L;
            ul_152  =  ul_2 + l_151;
            i_153  =  i_146 << 9;
            i_154  =  i_146 << 6;
            i_155  =  i_153 + i_154;
            // BLOCK 26 MERGES [25 27 ]
            i_156  =  0;
            for(;i_156 < 512;)
            {
              // BLOCK 27
              i_157  =  i_156 + i_32;
              l_158  =  (long) i_157;
              l_159  =  l_158 << 2;
              l_160  =  l_159 + 16L;
              ul_161  =  ul_5 + l_160;
              f_162  =  *((__global float *) ul_161);
              i_163  =  i_155 + i_156;
              l_164  =  (long) i_163;
              l_165  =  l_164 + 16L;
              ul_166  =  ul_3 + l_165;
              ch_167  =  *((__global char *) ul_166);
              f_168  =  *((__global float *) ul_152);
              f_169  =  (float) ch_167;
              f_170  =  f_168 * f_169;
              f_171  =  fma(f_170, f_145, f_162);
              *((__global float *) ul_161)  =  f_171;
              i_172  =  i_156 + 1;
              i_156  =  i_172;
            }  // B26
            // BLOCK 28
            f_173  =  f_134 + f_145;
            i_174  =  i_135 + 1;
            f_134  =  f_173;
            i_135  =  i_174;
          }  // B24
          // BLOCK 29
          i_175  =  i_52 + 64;
          f_50  =  f_120;
          f_51  =  f_134;
          i_52  =  i_175;
        }  // B10
        // BLOCK 30
        i_176  =  i_8 + i_29;
        l_177  =  (long) i_31;
        l_178  =  l_177 << 2;
        l_179  =  l_178 + 16L;
        ul_180  =  ul_6 + l_179;
        i_181  =  isless(0.0F, f_51);
        if(i_181 == 1)
        {
          // BLOCK 31
          // BLOCK 32 MERGES [31 33 ]
          i_182  =  0;
          for(;i_182 < 512;)
          {
            // BLOCK 33
            i_183  =  i_182 + i_32;
            l_184  =  (long) i_183;
            l_185  =  l_184 << 2;
            l_186  =  l_185 + 16L;
            ul_187  =  ul_5 + l_186;
            f_188  =  *((__global float *) ul_187);
            f_189  =  1.0F / f_51;
            f_190  =  f_189 * f_188;
            *((__global float *) ul_187)  =  f_190;
            i_191  =  i_182 + 1;
            i_182  =  i_191;
          }  // B32
          // BLOCK 34
          d_192  =  (double) f_51;
          d_193  =  log(d_192);
          f_194  =  (float) d_193;
          f_195  =  f_194 + f_50;
          *((__global float *) ul_180)  =  f_195;
        }  // B30
        else
        {
          // BLOCK 35
          *((__global float *) ul_180)  =  -1.0E30F;
        }  // B30
        // BLOCK 36 MERGES [34 35 ]
        i_196  =  i_176;
        i_29  =  i_196;
      }  // B5
      // BLOCK 37
      i_197  =  i_9 + i_21;
      i_21  =  i_197;
    }  // B3
    // BLOCK 38
    i_198  =  i_10 + i_14;
    i_14  =  i_198;
  }  // B1
  // BLOCK 39
  return;
}
