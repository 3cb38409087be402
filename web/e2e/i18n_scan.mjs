// Finds every text the page could put on screen that does not come from the catalogue (src/i18n): a
// string or template literal with a letter in it that reaches the DOM. Read with the TypeScript
// compiler's checker, following values back from where they land:
//   - the sinks: the children and the title / placeholder / aria-label / alt / value attributes of
//     ui.ts's `h`, `toast`, alert / confirm / prompt, Telegram's showAlert / showConfirm / showPopup /
//     setText, append / prepend / replaceChildren / before / after / replaceWith / createTextNode /
//     insertAdjacentText / setAttribute of a text attribute, and assignments to textContent /
//     innerText / innerHTML / title / placeholder / ariaLabel / alt / value;
//   - back through conditionals, `+`, `??`, templates, arrays, the returns of the page's own
//     functions (a call of a catalogue function is the catalogue's text: only its parameters are
//     followed), variables and what is assigned or pushed to them, properties of the page's own types
//     and every object literal that fills them, parameters and every call that passes them, callbacks
//     (a function handed to another that calls it with text), and array methods' elements.
// A literal whose contextual type is a union of string literals (a code: `{ link: "live" }`) is not
// text; one on a line marked `i18n-neutral` (card notation) is the same in every language.
//
// Usage: node e2e/i18n_scan.mjs [root]  (root: src). Prints one JSON line per literal found
// ({file, line, column, text, sink}), then {"summary": {files, sinks}}.
import ts from "typescript";
import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";

const root = resolve(process.argv[2] ?? "src");
const catalogueDir = join(root, "i18n") + sep;
const generatedDir = join(root, "gen") + sep;

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

const files = sources(root);
const program = ts.createProgram(files, {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ES2022,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: [],
});
const checker = program.getTypeChecker();
const inRoot = (node) => {
  const name = resolve(node.getSourceFile().fileName);
  return name.startsWith(root + sep) && !name.startsWith(generatedDir);
};
const inCatalogue = (node) => resolve(node.getSourceFile().fileName).startsWith(catalogueDir);
const scanned = program.getSourceFiles().filter((sf) => !sf.isDeclarationFile && inRoot(sf) && !inCatalogue(sf));

const TEXT_ATTRIBUTES = new Set(["title", "placeholder", "aria-label", "aria-description", "aria-valuetext", "alt", "value", "label"]);
const TEXT_PROPERTIES = new Set(["textContent", "innerText", "innerHTML", "outerHTML", "title", "placeholder", "ariaLabel", "alt", "value"]);
const FIRST_ARGUMENT_SINKS = new Set(["toast", "alert", "confirm", "prompt", "showAlert", "showConfirm", "showPopup", "setText", "createTextNode", "write", "writeln"]);
const EVERY_ARGUMENT_SINKS = new Set(["append", "prepend", "replaceChildren", "before", "after", "replaceWith"]);
const ELEMENT_METHODS = new Set(["map", "flatMap", "forEach", "filter", "find", "findLast", "some", "every", "sort", "toSorted", "reduce"]);

// --- where things are declared ---------------------------------------------------------------
const declarations = new Map(); // node -> its declaration (asked again every round)
function declarationOf(node) {
  if (!declarations.has(node)) declarations.set(node, lookUpDeclaration(node));
  return declarations.get(node);
}

function lookUpDeclaration(node) {
  // `{ problems }`: the value is the variable of that name, not the property it fills.
  let symbol = node.parent && ts.isShorthandPropertyAssignment(node.parent) && node.parent.name === node
    ? checker.getShorthandAssignmentValueSymbol(node.parent)
    : checker.getSymbolAtLocation(node);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  return symbol?.valueDeclaration ?? symbol?.declarations?.[0];
}

/** The function a declaration names (a function, a method, or a variable holding an arrow). */
function functionOf(declaration) {
  if (!declaration) return undefined;
  if (ts.isFunctionDeclaration(declaration) || ts.isMethodDeclaration(declaration) || ts.isArrowFunction(declaration) || ts.isFunctionExpression(declaration)) return declaration;
  if (ts.isVariableDeclaration(declaration) && declaration.initializer) {
    let init = declaration.initializer;
    while (ts.isParenthesizedExpression(init) || ts.isAsExpression(init)) init = init.expression;
    if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return init;
  }
  return undefined;
}

function calleeFunction(call) {
  const callee = call.expression;
  return functionOf(declarationOf(ts.isPropertyAccessExpression(callee) ? callee.name : callee));
}

function returnsOf(fn) {
  if (!fn.body) return [];
  if (!ts.isBlock(fn.body)) return [fn.body];
  const found = [];
  const walk = (node) => {
    if (ts.isFunctionLike(node)) return;
    if (ts.isReturnStatement(node) && node.expression) found.push(node.expression);
    ts.forEachChild(node, walk);
  };
  ts.forEachChild(fn.body, walk);
  return found;
}

function stringish(type) {
  if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.StringLike)) return true;
  if (type.isUnion() || type.isIntersection()) return type.types.some(stringish);
  if (checker.isArrayType(type) || checker.isTupleType(type)) return checker.getTypeArguments(type).some(stringish);
  return false;
}

/** A code, not text: the literal's contextual type is a union of string literals. */
function isCode(literal) {
  const type = checker.getContextualType(literal);
  if (!type) return false;
  const parts = type.isUnion() ? type.types : [type];
  const strings = parts.filter((p) => !(p.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)));
  return strings.length > 0 && strings.every((p) => p.flags & ts.TypeFlags.StringLiteral);
}

function neutral(node) {
  const sf = node.getSourceFile();
  const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
  const start = sf.getPositionOfLineAndCharacter(line, 0);
  const end = line + 1 < sf.getLineStarts().length ? sf.getPositionOfLineAndCharacter(line + 1, 0) : sf.text.length;
  return sf.text.slice(start, end).includes("i18n-neutral");
}

// --- every call, write and object literal of the page, once ----------------------------------
const callSites = new Map(); // function node -> calls of it
const writes = new Map(); // declaration -> expressions written to it (assigned, pushed, object-literal filled)
const allCalls = [];
const addWrite = (declaration, expression) => {
  if (!declaration || !expression) return;
  if (!writes.has(declaration)) writes.set(declaration, []);
  writes.get(declaration).push(expression);
};
const targetOf = (node) => declarationOf(ts.isPropertyAccessExpression(node) ? node.name : node);

for (const sf of program.getSourceFiles().filter((f) => !f.isDeclarationFile && inRoot(f))) {
  const walk = (node) => {
    if (ts.isCallExpression(node)) {
      allCalls.push(node);
      const fn = calleeFunction(node);
      if (fn) {
        if (!callSites.has(fn)) callSites.set(fn, []);
        callSites.get(fn).push(node);
      }
      const callee = node.expression;
      if (ts.isPropertyAccessExpression(callee) && ["push", "unshift"].includes(callee.name.text)) {
        for (const arg of node.arguments) addWrite(targetOf(callee.expression), arg);
      }
    }
    if (ts.isBinaryExpression(node) && [ts.SyntaxKind.EqualsToken, ts.SyntaxKind.PlusEqualsToken, ts.SyntaxKind.QuestionQuestionEqualsToken, ts.SyntaxKind.BarBarEqualsToken].includes(node.operatorToken.kind)) {
      addWrite(targetOf(node.left), node.right);
    }
    if (ts.isObjectLiteralExpression(node)) {
      const type = checker.getContextualType(node);
      for (const property of node.properties) {
        if (!type || !property.name || !(ts.isPropertyAssignment(property) || ts.isShorthandPropertyAssignment(property))) continue;
        const name = ts.isIdentifier(property.name) || ts.isStringLiteral(property.name) ? property.name.text : undefined;
        if (name === undefined) continue;
        // Each type the literal may be (a union's members: `Verdict | PromiseLike<Verdict>` in an async return).
        const types = type.isUnion() ? type.types : [type];
        for (const member of types) {
          for (const declaration of checker.getPropertyOfType(member, name)?.declarations ?? []) {
            addWrite(declaration, ts.isPropertyAssignment(property) ? property.initializer : property.name);
          }
        }
      }
    }
    ts.forEachChild(node, walk);
  };
  walk(sf);
}

// --- following values back to their literals --------------------------------------------------
const found = new Map(); // "file:pos" -> report
const textParameters = new Map(); // function node -> Set of parameter indexes whose value reaches the DOM
const textDeclarations = new Set(); // variables and properties whose value reaches the DOM
const callbackParameters = new Map(); // parameter declaration -> Set of argument indexes it is called with text at
const stringTyped = new Map(); // node -> whether its type can be a string
let changed = true;
let visited = new Set();
let sinks = 0;

function report(node, sink) {
  const sf = node.getSourceFile();
  const key = `${sf.fileName}:${node.getStart()}`;
  if (found.has(key)) return;
  const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart());
  found.set(key, { file: relative(root, sf.fileName), line: line + 1, column: character + 1, text: node.getText().slice(0, 120), sink });
}

function markParameter(fn, index) {
  if (!textParameters.has(fn)) textParameters.set(fn, new Set());
  const indexes = textParameters.get(fn);
  if (!indexes.has(index)) {
    indexes.add(index);
    changed = true;
  }
}

function markDeclaration(declaration) {
  if (!textDeclarations.has(declaration)) {
    textDeclarations.add(declaration);
    changed = true;
  }
}

function visitFunctionResult(fn, sink) {
  for (const expression of returnsOf(fn)) visit(expression, sink);
}

function visitContainer(expression, sink) {
  while (ts.isParenthesizedExpression(expression) || ts.isNonNullExpression(expression)) expression = expression.expression;
  const declaration = ts.isIdentifier(expression) || ts.isPropertyAccessExpression(expression) ? targetOf(expression) : undefined;
  if (!declaration || !inRoot(declaration) || inCatalogue(declaration)) return;
  if (ts.isVariableDeclaration(declaration) || ts.isPropertyAssignment(declaration)) {
    const init = declaration.initializer;
    if (init && (ts.isObjectLiteralExpression(init) || ts.isArrayLiteralExpression(init) || ts.isStringLiteralLike(init))) visit(init, sink);
    else if (init) visitContainer(init, sink);
  }
}

function visit(expression, sink) {
  if (!expression || visited.has(expression)) return;
  visited.add(expression);
  const e = expression;
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) {
    if (/\p{L}/u.test(e.text) && !isCode(e) && !neutral(e)) report(e, sink);
    return;
  }
  if (ts.isTemplateExpression(e)) {
    const texts = [e.head.text, ...e.templateSpans.map((span) => span.literal.text)];
    if (texts.some((text) => /\p{L}/u.test(text)) && !neutral(e)) report(e, sink);
    for (const span of e.templateSpans) visit(span.expression, sink);
    return;
  }
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e) || ts.isSatisfiesExpression(e) || ts.isTypeAssertionExpression(e) || ts.isSpreadElement(e) || ts.isAwaitExpression(e)) {
    visit(e.expression, sink);
    return;
  }
  if (ts.isConditionalExpression(e)) {
    visit(e.whenTrue, sink);
    visit(e.whenFalse, sink);
    return;
  }
  if (ts.isBinaryExpression(e)) {
    const op = e.operatorToken.kind;
    if (op === ts.SyntaxKind.PlusToken || op === ts.SyntaxKind.QuestionQuestionToken || op === ts.SyntaxKind.BarBarToken) visit(e.left, sink);
    if ([ts.SyntaxKind.PlusToken, ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.CommaToken, ts.SyntaxKind.EqualsToken].includes(op)) visit(e.right, sink);
    return;
  }
  if (ts.isArrayLiteralExpression(e)) {
    for (const element of e.elements) visit(element, sink);
    return;
  }
  if (ts.isObjectLiteralExpression(e)) {
    for (const property of e.properties) {
      if (ts.isPropertyAssignment(property)) visit(property.initializer, sink);
      else if (ts.isShorthandPropertyAssignment(property)) visit(property.name, sink);
      else if (ts.isSpreadAssignment(property)) visit(property.expression, sink);
    }
    return;
  }
  // Anything else carries text only when its type can be a string.
  if (!stringTyped.has(e)) stringTyped.set(e, stringish(checker.getTypeAtLocation(e)));
  if (!stringTyped.get(e)) return;
  if (ts.isCallExpression(e)) return visitCall(e, sink);
  if (ts.isIdentifier(e)) return visitName(e, sink);
  if (ts.isPropertyAccessExpression(e)) {
    const declaration = declarationOf(e.name);
    if (declaration && inRoot(declaration) && !inCatalogue(declaration)) {
      if (ts.isPropertyAssignment(declaration)) visit(declaration.initializer, sink);
      else if (ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration) || ts.isParameter(declaration)) markDeclaration(declaration);
    }
    return;
  }
  if (ts.isElementAccessExpression(e)) {
    visitContainer(e.expression, sink);
    return;
  }
}

function visitCall(call, sink) {
  const callee = call.expression;
  const declaration = declarationOf(ts.isPropertyAccessExpression(callee) ? callee.name : callee);
  if (declaration && inCatalogue(declaration)) {
    // The catalogue's words: what its parameters are filled with is followed.
    for (const arg of call.arguments) if (ts.isObjectLiteralExpression(arg)) visit(arg, sink);
    return;
  }
  const fn = functionOf(declaration);
  if (fn && inRoot(fn)) {
    visitFunctionResult(fn, sink);
    return;
  }
  if (declaration && ts.isParameter(declaration)) return; // a callback's result: its callers are followed
  // The language's own functions (join, trim, String, replace, map ...): the receiver and arguments.
  if (ts.isPropertyAccessExpression(callee)) visit(callee.expression, sink);
  for (const arg of call.arguments) {
    if (ts.isArrowFunction(arg) || ts.isFunctionExpression(arg)) visitFunctionResult(arg, sink);
    else visit(arg, sink);
  }
}

function visitName(name, sink) {
  const declaration = declarationOf(name);
  if (!declaration || !inRoot(declaration) || inCatalogue(declaration)) return;
  if (ts.isParameter(declaration)) {
    const fn = declaration.parent;
    const index = fn.parameters.indexOf(declaration);
    // A callback of an array method: its value is an element of the array.
    const call = fn.parent;
    if ((ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) && call && ts.isCallExpression(call) && call.arguments.includes(fn)
      && ts.isPropertyAccessExpression(call.expression) && ELEMENT_METHODS.has(call.expression.name.text)) {
      if (index === 0 || (call.expression.name.text === "reduce" && index === 1)) visit(call.expression.expression, sink);
      return;
    }
    if (ts.isParameterPropertyDeclaration?.(declaration, declaration.parent)) markDeclaration(declaration);
    markParameter(fn, index);
    return;
  }
  if (ts.isBindingElement(declaration)) {
    let node = declaration;
    while (node && !ts.isVariableDeclaration(node)) node = node.parent;
    if (node?.initializer) visit(node.initializer, sink);
    return;
  }
  if (ts.isVariableDeclaration(declaration)) {
    const statement = declaration.parent?.parent;
    if (statement && ts.isForOfStatement(statement)) visit(statement.expression, sink);
    if (declaration.initializer) visit(declaration.initializer, sink);
    markDeclaration(declaration);
  }
}

/** The function a value names, if the page declares it (an identifier, or an arrow written in place). */
function functionValue(expression) {
  if (ts.isArrowFunction(expression) || ts.isFunctionExpression(expression)) return expression;
  if (ts.isIdentifier(expression)) {
    const fn = functionOf(declarationOf(expression));
    return fn && inRoot(fn) ? fn : undefined;
  }
  return undefined;
}

function visitSinks(sf) {
  const root = (expression, sink) => {
    sinks += 1;
    visit(expression, sink);
  };
  const walk = (node) => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : "";
      const args = [...(node.arguments ?? [])];
      if (ts.isCallExpression(node) && ts.isIdentifier(callee) && name === "h") {
        args.slice(2).forEach((arg) => root(arg, "a child of h()"));
        const attributes = args[1];
        if (attributes && ts.isObjectLiteralExpression(attributes)) {
          for (const property of attributes.properties) {
            const key = property.name && (ts.isIdentifier(property.name) || ts.isStringLiteral(property.name)) ? property.name.text : "";
            if (TEXT_ATTRIBUTES.has(key) && ts.isPropertyAssignment(property)) root(property.initializer, `the ${key} attribute`);
          }
        }
      } else if (FIRST_ARGUMENT_SINKS.has(name) && args[0]) {
        root(args[0], `${name}()`);
      } else if (EVERY_ARGUMENT_SINKS.has(name) && ts.isPropertyAccessExpression(callee)) {
        args.forEach((arg) => root(arg, `${name}()`));
      } else if (name === "insertAdjacentText" && args[1]) {
        root(args[1], `${name}()`);
      } else if (name === "setAttribute" && args[0] && ts.isStringLiteral(args[0]) && TEXT_ATTRIBUTES.has(args[0].text) && args[1]) {
        root(args[1], `the ${args[0].text} attribute`);
      } else if (ts.isNewExpression(node) && (name === "Text" || name === "Option") && args[0]) {
        root(args[0], `new ${name}()`);
      }
      if (ts.isCallExpression(node)) {
        // A call of the page's function, or of a callback, with a parameter whose value reaches the DOM.
        const declaration = declarationOf(ts.isPropertyAccessExpression(callee) ? callee.name : callee);
        const fn = functionOf(declaration);
        for (const index of (fn && textParameters.get(fn)) ?? []) if (args[index]) root(args[index], `parameter ${index + 1} of ${name}()`);
        if (declaration && ts.isParameter(declaration)) {
          for (const index of callbackParameters.get(declaration) ?? []) if (args[index]) root(args[index], `the callback ${name}()`);
        }
      }
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(node.left) && TEXT_PROPERTIES.has(node.left.name.text)) {
      const target = declarationOf(node.left.name);
      if (!target || !inRoot(target)) root(node.right, node.left.name.text);
    }
    ts.forEachChild(node, walk);
  };
  walk(sf);
}

function propagate() {
  // Every value written to a variable or property whose value reaches the DOM.
  for (const declaration of textDeclarations) {
    for (const expression of writes.get(declaration) ?? []) visit(expression, "a value that reaches the page");
  }
  // A function handed to another as an argument: if it puts a parameter on the page, the receiving
  // parameter's calls do so with the same argument.
  for (const call of allCalls) {
    const fn = calleeFunction(call);
    if (!fn || !inRoot(fn)) continue;
    call.arguments.forEach((arg, j) => {
      const given = functionValue(arg);
      const indexes = given && textParameters.get(given);
      const parameter = fn.parameters[j];
      if (!indexes || !parameter) return;
      if (!callbackParameters.has(parameter)) callbackParameters.set(parameter, new Set());
      for (const index of indexes) {
        if (!callbackParameters.get(parameter).has(index)) {
          callbackParameters.get(parameter).add(index);
          changed = true;
        }
      }
    });
  }
}

let rounds = 0;
for (; changed && rounds < 50; rounds += 1) {
  changed = false;
  visited = new Set();
  sinks = 0;
  for (const sf of scanned) visitSinks(sf);
  propagate();
}

for (const item of [...found.values()].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column)) {
  console.log(JSON.stringify(item));
}
console.log(JSON.stringify({ summary: { files: scanned.map((sf) => relative(root, sf.fileName)).sort(), sinks, rounds } }));
