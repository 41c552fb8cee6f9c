/**
 * Reading MTConnect XML documents with bounds. sax (isaacs/sax-js, no
 * dependencies) parses strictly and streams: each handler sees one element
 * at a time, so the bounds are enforced while reading (document size, depth,
 * number of elements, length of a text) and only what the driver needs is
 * kept, instead of building the whole tree first. A DOCTYPE is refused:
 * MTConnect documents have none, and refusing it rules out entity expansion.
 * See docs/drivers/mtconnect.md ("XML") for why sax over a tree builder.
 */
import { createRequire } from 'node:module';
import type * as Sax from 'sax';

/** sax, loaded at the first document read, so a gateway without MTConnect machines does not load it. */
let saxModule: typeof Sax | undefined;
const sax = (): typeof Sax => (saxModule ??= createRequire(import.meta.url)('sax') as typeof Sax);

export interface XmlLimits {
  /** Longest document, in characters. */
  maxChars: number;
  /** Deepest element nesting. */
  maxDepth: number;
  /** Most elements in one document. */
  maxElements: number;
  /** Longest text of one element that a handler collects. */
  maxTextChars: number;
}

export const DEFAULT_XML_LIMITS: XmlLimits = { maxChars: 16 * 1024 * 1024, maxDepth: 64, maxElements: 1_000_000, maxTextChars: 65_536 };

/** One element as a handler sees it: its local name (no namespace prefix) and attributes. */
export interface XmlElement {
  name: string;
  attributes: Readonly<Record<string, string>>;
  depth: number;
}

export interface XmlHandlers {
  /** An element opens; return true to have its text collected and handed to `close`. */
  open(element: XmlElement): boolean | void;
  /** An element closes, with its text when `open` asked for it. */
  close(element: XmlElement, text: string | undefined): void;
}

/** A document that is not well-formed XML or breaks a bound. */
export class XmlProblem extends Error {}

const localName = (qualified: string): string => {
  const colon = qualified.indexOf(':');
  return colon < 0 ? qualified : qualified.slice(colon + 1);
};

/** Reads `text` through `handlers`; throws XmlProblem naming what is wrong. */
export function readXml(text: string, handlers: XmlHandlers, limits: XmlLimits = DEFAULT_XML_LIMITS): void {
  if (text.length > limits.maxChars) throw new XmlProblem(`document of ${text.length} characters is longer than ${limits.maxChars}`);
  const parser = sax().parser(true, { trim: false, normalize: false, position: true });
  const stack: Array<{ element: XmlElement; text: string[] | undefined; length: number }> = [];
  let elements = 0;
  // sax only records some errors (an unclosed root at the end); throwing here makes every one end the read.
  parser.onerror = (error) => {
    throw error;
  };
  parser.ondoctype = () => {
    throw new XmlProblem('a DOCTYPE is not accepted in an MTConnect document');
  };
  parser.onopentag = (tag) => {
    elements++;
    if (elements > limits.maxElements) throw new XmlProblem(`more than ${limits.maxElements} elements`);
    if (stack.length >= limits.maxDepth) throw new XmlProblem(`elements nested deeper than ${limits.maxDepth}`);
    const element: XmlElement = { name: localName(tag.name), attributes: tag.attributes as Record<string, string>, depth: stack.length };
    const collect = handlers.open(element) === true;
    stack.push({ element, text: collect ? [] : undefined, length: 0 });
  };
  const onText = (chunk: string) => {
    const top = stack[stack.length - 1];
    if (!top?.text) return;
    top.length += chunk.length;
    if (top.length > limits.maxTextChars) throw new XmlProblem(`text of <${top.element.name}> is longer than ${limits.maxTextChars} characters`);
    top.text.push(chunk);
  };
  parser.ontext = onText;
  parser.oncdata = onText;
  parser.onclosetag = () => {
    const top = stack.pop();
    if (top) handlers.close(top.element, top.text?.join(''));
  };
  try {
    parser.write(text).close();
  } catch (error) {
    if (error instanceof XmlProblem) throw error;
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new XmlProblem(`not well-formed XML: ${message} (line ${parser.line + 1})`);
  }
}

/** Whole number from an attribute, or undefined when absent or not a whole number. */
export function integerAttribute(attributes: Readonly<Record<string, string>>, name: string): number | undefined {
  const raw = attributes[name];
  if (raw === undefined || !/^\s*-?\d+\s*$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}
