// expect: cannot convert value of type '[String : Any]' to expected argument type 'CFDictionary'
// SecItem functions take a CFDictionary: a Swift dictionary needs `as CFDictionary`.
import Security

func delete(_ query: [String: Any]) -> OSStatus {
    SecItemDelete(query)
}
