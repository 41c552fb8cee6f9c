/** The tools about part programs on a machine: the list and the running program. */
import { z } from 'zod';
import { LIVE_READS } from '../../../core/roles/gateway/contract/live-reads.js';
import { defineTool, defined, type ToolDefinition } from '../tool-runtime.js';
import { machineID } from './params.js';

export const PROGRAM_TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: 'list_programs',
    title: 'List part programs',
    description: 'Part program files on a machine (contacts it).',
    input: z
      .object({
        machineID,
        dirAtCNC: z.string().max(1024).optional().describe('directory on the controller, e.g. //CNC_MEM/USER/PATH1/ (optional)'),
        subDir: z.string().max(1024).optional().describe('sub-directory (optional)'),
        startPrgNo: z.number().int().min(0).optional().describe('first program number to list (optional)'),
      })
      .strict(),
    primary: LIVE_READS.readProgramList,
    run: (input, caller) => caller.body(LIVE_READS.readProgramList, defined(input)),
  }),
  defineTool({
    name: 'read_current_program',
    title: 'Read the running program',
    description:
      'The program the machine is running: directory, file name and content (contacts it). Content is text: UTF-8, or Windows-1252 for bytes that are not UTF-8 (encoding says which); size and sha256 are of the exact bytes. Content longer than maxChars is cut and flagged truncated, with totalChars.',
    input: z
      .object({
        machineID,
        dirAtCNC: z.string().max(1024).optional().describe('directory on the controller (optional)'),
        subDir: z.string().max(1024).optional().describe('sub-directory (optional)'),
        maxChars: z.number().int().min(0).default(20000).describe('maximum characters of content (default 20000; 0 = unlimited)'),
      })
      .strict(),
    primary: LIVE_READS.readCurrentProgram,
    async run({ maxChars, ...rest }, caller) {
      // The bytes (contentBase64) stay out: they would carry the whole program past maxChars, and the text names every byte.
      const { contentBase64: _bytes, ...program } = await caller.call(LIVE_READS.readCurrentProgram, defined(rest));
      // The interface gives the text unless asked not to, and this tool does not ask.
      const content = program.content ?? '';
      const totalChars = content.length;
      const truncated = maxChars > 0 && totalChars > maxChars;
      return { ...program, content: truncated ? content.slice(0, maxChars) : content, truncated, totalChars };
    },
  }),
];
